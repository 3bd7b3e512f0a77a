/* The deal.II bridge of tpmg: a coarse solver by Trilinos. */
#include <tpmg/dealii/exceptions.h>
#include <tpmg/dealii/trilinos_coarse_solver.h>

#include <cmath>
#include <string>

// TPMG_DEALII_WITH_TRILINOS: set by bridge/CMakeLists.txt (option
// TPMG_BRIDGE_TRILINOS), 1 only where deal.II has Trilinos.
#if TPMG_DEALII_WITH_TRILINOS
#  ifndef DEAL_II_WITH_TRILINOS
#    error \
      "TPMG_DEALII_WITH_TRILINOS is set, but deal.II was built without Trilinos"
#  endif
#  include <deal.II/base/index_set.h>
#  include <deal.II/base/quadrature_lib.h>

#  include <deal.II/dofs/dof_tools.h>

#  include <deal.II/fe/fe_values.h>

#  include <deal.II/lac/affine_constraints.h>
#  include <deal.II/lac/dynamic_sparsity_pattern.h>
#  include <deal.II/lac/full_matrix.h>
#  include <deal.II/lac/solver_cg.h>
#  include <deal.II/lac/solver_control.h>
#  include <deal.II/lac/trilinos_precondition.h>
#  include <deal.II/lac/trilinos_solver.h>
#  include <deal.II/lac/trilinos_sparse_matrix.h>
#  include <deal.II/lac/trilinos_vector.h>

#  include <deal.II/multigrid/mg_tools.h>

#  include <vector>
#endif

using namespace ::dealii;

namespace tpmg::dealii
{
  template <int dim, typename Number>
  struct TrilinosCoarseSolver<dim, Number>::Data
  {
#if TPMG_DEALII_WITH_TRILINOS
    unsigned int   level = 0;
    AdditionalData settings;
    IndexSet       owned;
    /** local indices (into the owned DoFs) of the owned Dirichlet DoFs */
    std::vector<types::global_dof_index> dirichlet;

    TrilinosWrappers::SparseMatrix    matrix;
    TrilinosWrappers::PreconditionAMG amg;
    // deal.II 9.4's SolverDirect takes a SolverControl, which a direct solve
    // does not use
    SolverControl                                   direct_control;
    std::unique_ptr<TrilinosWrappers::SolverDirect> direct;

    mutable TrilinosWrappers::MPI::Vector b, x;
    mutable unsigned int                  last_n_iterations = 0;
#endif
  };



  template <int dim, typename Number>
  TrilinosCoarseSolver<dim, Number>::TrilinosCoarseSolver() = default;



  template <int dim, typename Number>
  TrilinosCoarseSolver<dim, Number>::TrilinosCoarseSolver(
    const DoFHandler<dim>   &dof_handler,
    const MGConstrainedDoFs &mg_constrained_dofs,
    const unsigned int       level,
    const AdditionalData    &data)
  {
    initialize(dof_handler, mg_constrained_dofs, level, data);
  }



  template <int dim, typename Number>
  TrilinosCoarseSolver<dim, Number>::~TrilinosCoarseSolver() = default;



  template <int dim, typename Number>
  bool
  TrilinosCoarseSolver<dim, Number>::is_available()
  {
    return TPMG_DEALII_WITH_TRILINOS;
  }



  template <int dim, typename Number>
  void
  TrilinosCoarseSolver<dim, Number>::clear()
  {
    data.reset();
  }



#if TPMG_DEALII_WITH_TRILINOS
  template <int dim, typename Number>
  void
  TrilinosCoarseSolver<dim, Number>::initialize(
    const DoFHandler<dim>   &dof_handler,
    const MGConstrainedDoFs &mg_constrained_dofs,
    const unsigned int       level,
    const AdditionalData    &settings)
  {
    clear();
    const FiniteElement<dim> &fe = dof_handler.get_fe();
    AssertThrow(fe.n_components() == 1,
                ExcUnsupported("TrilinosCoarseSolver: an element with " +
                               std::to_string(fe.n_components()) +
                               " components (it assembles the scalar "
                               "Laplace matrix)"));
    AssertThrow(level < dof_handler.get_triangulation().n_global_levels() &&
                  dof_handler.has_level_dofs(),
                ExcUnsupported(
                  "TrilinosCoarseSolver: level " + std::to_string(level) +
                  " has no level DoFs (the mesh has " +
                  std::to_string(
                    dof_handler.get_triangulation().n_global_levels()) +
                  " levels; call distribute_mg_dofs())"));
    AssertThrow(settings.relative_tolerance > 0 &&
                  settings.relative_tolerance < 1 &&
                  settings.max_iterations >= 1 && settings.reaction >= 0 &&
                  std::isfinite(settings.reaction),
                ExcUnsupported(
                  "TrilinosCoarseSolver: relative_tolerance " +
                  std::to_string(settings.relative_tolerance) +
                  " and max_iterations " +
                  std::to_string(settings.max_iterations) + ", reaction " +
                  std::to_string(settings.reaction) +
                  " (the tolerance must lie in (0, 1), the limit be >= 1, the "
                  "reaction be finite and >= 0)"));

    auto d      = std::make_unique<Data>();
    d->level    = level;
    d->settings = settings;
    d->owned    = dof_handler.locally_owned_mg_dofs(level);
    const IndexSet relevant =
      DoFTools::extract_locally_relevant_level_dofs(dof_handler, level);
    const MPI_Comm communicator =
      dof_handler.get_triangulation().get_communicator();

    // Homogeneous Dirichlet constraints on the level's boundary DoFs, as
    // step-50 builds its level matrices: distribute_local_to_global() leaves
    // those rows and columns empty but for a positive diagonal entry.
    IndexSet dirichlet(dof_handler.n_dofs(level));
    if (mg_constrained_dofs.have_boundary_indices())
      dirichlet = mg_constrained_dofs.get_boundary_indices(level) & relevant;
    AffineConstraints<double> constraints;
#  if DEAL_II_VERSION_GTE(9, 6, 0)
    constraints.reinit(d->owned, relevant);
#  else
    constraints.reinit(relevant);
#  endif
    constraints.add_lines(dirichlet);
    constraints.close();
    for (const types::global_dof_index i : dirichlet & d->owned)
      d->dirichlet.push_back(d->owned.index_within_set(i));

    DynamicSparsityPattern dsp(relevant);
    MGTools::make_sparsity_pattern(dof_handler, dsp, level, constraints, false);
    d->matrix.reinit(d->owned, d->owned, dsp, communicator, true);

    // The cell matrices of -Laplace + c: Gauss with k+1 points integrates
    // them exactly on affine cells.
    const QGauss<dim>                    quadrature(fe.degree + 1);
    FEValues<dim>                        fe_values(fe,
                            quadrature,
                            update_values | update_gradients |
                              update_JxW_values);
    const unsigned int                   n = fe.n_dofs_per_cell();
    FullMatrix<double>                   cell_matrix(n, n);
    std::vector<types::global_dof_index> indices(n);
    bool                                 have_cell_matrix = false;
    for (const auto &cell : dof_handler.mg_cell_iterators_on_level(level))
      if (cell->is_locally_owned_on_level())
        {
          fe_values.reinit(cell);
          if (!have_cell_matrix ||
              fe_values.get_cell_similarity() != CellSimilarity::translation)
            {
              cell_matrix = 0;
              for (const unsigned int q : fe_values.quadrature_point_indices())
                for (unsigned int i = 0; i < n; ++i)
                  for (unsigned int j = 0; j < n; ++j)
                    cell_matrix(i, j) +=
                      (fe_values.shape_grad(i, q) * fe_values.shape_grad(j, q) +
                       settings.reaction * fe_values.shape_value(i, q) *
                         fe_values.shape_value(j, q)) *
                      fe_values.JxW(q);
              have_cell_matrix = true;
            }
          cell->get_mg_dof_indices(indices);
          constraints.distribute_local_to_global(cell_matrix,
                                                 indices,
                                                 d->matrix);
        }
    d->matrix.compress(VectorOperation::add);

    if (settings.method == Method::amg)
      {
        // deal.II's settings for Poisson problems (step-40, step-50): one
        // V-cycle of smoothed aggregation with Chebyshev smoothing, KLU on
        // ML's coarsest level.
        TrilinosWrappers::PreconditionAMG::AdditionalData amg_data;
        amg_data.elliptic              = true;
        amg_data.higher_order_elements = fe.degree > 1;
        amg_data.smoother_sweeps       = 2;
        amg_data.aggregation_threshold = 0.02;
        d->amg.initialize(d->matrix, amg_data);
      }
    else
      {
        d->direct = std::make_unique<TrilinosWrappers::SolverDirect>(
          d->direct_control,
          TrilinosWrappers::SolverDirect::AdditionalData(false, "Amesos_Klu"));
        d->direct->initialize(d->matrix);
      }
    d->b.reinit(d->owned, communicator);
    d->x.reinit(d->owned, communicator);
    data = std::move(d);
  }



  template <int dim, typename Number>
  void
  TrilinosCoarseSolver<dim, Number>::operator()(const unsigned int level,
                                                VectorType        &dst,
                                                const VectorType  &src) const
  {
    AssertThrow(data != nullptr,
                ExcMessage("TrilinosCoarseSolver: not initialized (call "
                           "initialize() before the first solve)"));
    const Data &d = *data;
    AssertThrow(level == d.level,
                ExcUnsupported(
                  "TrilinosCoarseSolver: a coarse solve on level " +
                  std::to_string(level) + ", but the matrix is that of level " +
                  std::to_string(d.level)));
    for (const VectorType *v : {&src, static_cast<const VectorType *>(&dst)})
      AssertThrow(v->size() == d.matrix.m() &&
                    v->get_partitioner()->locally_owned_range() == d.owned,
                  ExcUnsupported(
                    "TrilinosCoarseSolver: a vector of size " +
                    std::to_string(v->size()) + " with " +
                    std::to_string(v->locally_owned_size()) +
                    " locally owned entries where level " +
                    std::to_string(d.level) + " has " +
                    std::to_string(d.matrix.m()) + " DoFs, " +
                    std::to_string(d.owned.n_elements()) +
                    " of them owned here (the level vector must own the "
                    "DoFs DoFHandler::locally_owned_mg_dofs() gives)"));

    // b = src in double, zero on the Dirichlet DoFs
    const unsigned int n_owned = d.owned.n_elements();
    TrilinosScalar    *b       = d.b.begin();
    for (unsigned int i = 0; i < n_owned; ++i)
      b[i] = src.local_element(i);
    for (const types::global_dof_index i : d.dirichlet)
      b[i] = 0;

    if (d.settings.method == Method::amg)
      {
        d.x                 = 0;
        const double b_norm = d.b.l2_norm();
        d.last_n_iterations = 0;
        if (b_norm > 0)
          {
            SolverControl control(d.settings.max_iterations,
                                  d.settings.relative_tolerance * b_norm,
                                  false,
                                  false);
            SolverCG<TrilinosWrappers::MPI::Vector> cg(control);
            cg.solve(d.matrix, d.x, d.b, d.amg);
            d.last_n_iterations = control.last_step();
          }
      }
    else
      d.direct->solve(d.x, d.b);

    // dst = x, exactly zero on the Dirichlet DoFs as tpmg's CoarseSolver
    dst.zero_out_ghost_values();
    const TrilinosScalar *x = d.x.begin();
    for (unsigned int i = 0; i < n_owned; ++i)
      dst.local_element(i) = static_cast<Number>(x[i]);
    for (const types::global_dof_index i : d.dirichlet)
      dst.local_element(i) = 0;
  }



  template <int dim, typename Number>
  types::global_dof_index
  TrilinosCoarseSolver<dim, Number>::m() const
  {
    return data != nullptr ? data->matrix.m() : 0;
  }



  template <int dim, typename Number>
  std::size_t
  TrilinosCoarseSolver<dim, Number>::n_nonzero_elements() const
  {
    return data != nullptr ? data->matrix.n_nonzero_elements() : 0;
  }



  template <int dim, typename Number>
  unsigned int
  TrilinosCoarseSolver<dim, Number>::last_n_iterations() const
  {
    return data != nullptr ? data->last_n_iterations : 0;
  }

#else

  // Without Trilinos: the class exists, so that programs compile and choose
  // at run time, and refuses to work.
  namespace
  {
    std::string
    without_trilinos()
    {
      return "TrilinosCoarseSolver: this build of the tpmg bridge has no "
             "Trilinos (deal.II was configured without it, "
             "DEAL_II_WITH_TRILINOS, or tpmg with -DTPMG_BRIDGE_TRILINOS=OFF); "
             "use tpmg's CoarseSolver or a deal.II with Trilinos";
    }
  } // namespace



  template <int dim, typename Number>
  void
  TrilinosCoarseSolver<dim, Number>::initialize(const DoFHandler<dim> &,
                                                const MGConstrainedDoFs &,
                                                const unsigned int,
                                                const AdditionalData &)
  {
    AssertThrow(false, ExcUnsupported(without_trilinos()));
  }



  template <int dim, typename Number>
  void
  TrilinosCoarseSolver<dim, Number>::operator()(const unsigned int,
                                                VectorType &,
                                                const VectorType &) const
  {
    AssertThrow(false, ExcUnsupported(without_trilinos()));
  }



  template <int dim, typename Number>
  types::global_dof_index
  TrilinosCoarseSolver<dim, Number>::m() const
  {
    return 0;
  }



  template <int dim, typename Number>
  std::size_t
  TrilinosCoarseSolver<dim, Number>::n_nonzero_elements() const
  {
    return 0;
  }



  template <int dim, typename Number>
  unsigned int
  TrilinosCoarseSolver<dim, Number>::last_n_iterations() const
  {
    return 0;
  }
#endif



  template class TrilinosCoarseSolver<2, double>;
  template class TrilinosCoarseSolver<2, float>;
  template class TrilinosCoarseSolver<3, double>;
  template class TrilinosCoarseSolver<3, float>;
} // namespace tpmg::dealii
