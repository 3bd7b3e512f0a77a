/* What the deal.II programs dealii-poisson and dealii-compare share: see
 * dealii-app-common.h. */
#include "dealii-app-common.h"

#include <deal.II/base/exceptions.h>
#include <deal.II/base/quadrature_lib.h>
#include <deal.II/base/utilities.h>

#include <deal.II/dofs/dof_tools.h>

#include <deal.II/grid/grid_generator.h>

#include <deal.II/lac/vector.h>

#include <deal.II/numerics/vector_tools.h>

#include <tpmg/dealii/renumbering.h>

#include <cmath>
#include <cstdio>
#include <sstream>

namespace DealiiApp
{
  using namespace dealii;

  // @sect3{The options both programs have}

  CommandLine::CommandLine(int argc, char **argv, const Options &options)
    : argc(argc)
    , argv(argv)
    , options(options)
    , problem(app_problem_default())
    , solver(app_solver_default())
    , machine(app_machine_default())
  {
    solver.type = TPMG_SOLVER_GMRES; // deal.II's Krylov methods: gmres or cg
  }



  bool
  CommandLine::next()
  {
    while (++i < argc)
      {
        // the solver options of tpmg-poisson that deal.II's solvers have
        const bool krylov_option = is("--solver") || is("--tol") ||
                                   is("--max-iterations") || is("--restart");
        if (((options.rhs || !is("--rhs")) &&
             app_problem_option(argc, argv, &i, &problem)) ||
            (krylov_option && app_solver_option(argc, argv, &i, &solver)) ||
            ((options.backend || is("--threads")) &&
             app_machine_option(argc, argv, &i, &machine)))
          continue;
        if (is("--help"))
          {
            asked_help = true;
            return false;
          }
        if (!is("--json"))
          return true;
        app_option_flag(argv[i], "--json");
        json = true;
      }
    return false;
  }



  bool
  CommandLine::is(const char *name) const
  {
    return app_option_is(argv[i], name);
  }



  const char *
  CommandLine::value(const char *name)
  {
    return app_option_value(argc, argv, &i, name);
  }



  void
  CommandLine::unknown() const
  {
    app_usage_error("unknown option '%.200s' (see --help)", argv[i]);
  }



  bool
  CommandLine::help() const
  {
    return asked_help;
  }



  bool
  CommandLine::level_given() const
  {
    return problem.level != 0;
  }



  void
  CommandLine::finish(const double target_dofs, Parameters &p)
  {
    app_problem_finish(&problem, target_dofs);
    app_solver_finish(&solver);
    if (problem.coefficient != APP_COEFFICIENT_ONE)
      app_usage_error("--coefficient: the deal.II programs solve a = 1 only so far");
    if (problem.rhs != TPMG_RHS_ONE && problem.rhs != TPMG_RHS_SINE)
      app_usage_error("--rhs %s: expected one of one, sine",
                      tpmg_rhs_name(problem.rhs));
    if (solver.type != TPMG_SOLVER_GMRES && solver.type != TPMG_SOLVER_CG)
      app_usage_error("--solver %s: expected one of gmres, cg",
                      tpmg_solver_type_name(solver.type));

    p.dim    = problem.dim;
    p.degree = problem.degree;
    p.level  = problem.level;
    p.cells.assign(problem.cells, problem.cells + problem.n_cells);
    p.box.assign(problem.box, problem.box + problem.n_box);
    p.rhs            = problem.rhs;
    p.solver         = solver.type;
    p.tolerance      = solver.tolerance;
    p.max_iterations = solver.max_iterations;
    p.restart        = solver.restart;
    if (machine.backend != nullptr)
      p.backend = machine.backend;
    if (machine.threads > 0)
      p.threads = machine.threads;
    p.json = json;
  }



  // @sect3{The test problem}

  template <int dim>
  double
  Solution<dim>::value(const Point<dim> &p, const unsigned int) const
  {
    double u = 1;
    for (unsigned int d = 0; d < dim; ++d)
      u *= std::sin(numbers::PI * p[d]);
    return u;
  }



  template <int dim>
  RightHandSide<dim>::RightHandSide(const tpmg_rhs rhs)
    : rhs(rhs)
  {}



  template <int dim>
  double
  RightHandSide<dim>::value(const Point<dim> &p, const unsigned int) const
  {
    if (rhs == TPMG_RHS_ONE)
      return 1.;
    return dim * numbers::PI * numbers::PI * Solution<dim>().value(p);
  }



  template <int dim>
  void
  make_mesh(const Parameters                          &prm,
            parallel::distributed::Triangulation<dim> &triangulation)
  {
    std::vector<unsigned int> repetitions(dim, 1);
    Point<dim>                lower, upper;
    for (unsigned int d = 0; d < dim; ++d)
      {
        if (!prm.cells.empty())
          repetitions[d] = prm.cells[d];
        lower[d] = prm.box.empty() ? 0. : prm.box[2 * d];
        upper[d] = prm.box.empty() ? 1. : prm.box[2 * d + 1];
      }
    if (Utilities::MPI::n_mpi_processes(triangulation.get_communicator()) > 1)
      {
        tpmg::dealii::make_slab_triangulation(
          triangulation, lower, upper, repetitions, prm.level);
        return;
      }
    if (prm.cells.empty() && prm.box.empty())
      GridGenerator::hyper_cube(triangulation, 0., 1.);
    else
      GridGenerator::subdivided_hyper_rectangle(triangulation,
                                                repetitions,
                                                lower,
                                                upper);
    triangulation.refine_global(prm.level);
  }



  template <int dim>
  void
  distribute_dofs(const FiniteElement<dim> &fe, DoFHandler<dim> &dof_handler)
  {
    dof_handler.distribute_dofs(fe);
    dof_handler.distribute_mg_dofs();
    tpmg::dealii::renumber_lexicographic(dof_handler);
  }



  template <int dim>
  void
  make_boundary_constraints(const Mapping<dim>        &mapping,
                            const DoFHandler<dim>     &dof_handler,
                            const Function<dim>       &g,
                            AffineConstraints<double> &constraints)
  {
    constraints.clear();
#if DEAL_II_VERSION_GTE(9, 6, 0)
    // the one-argument reinit() is deprecated from deal.II 9.6 on
    constraints.reinit(dof_handler.locally_owned_dofs(),
                       DoFTools::extract_locally_relevant_dofs(dof_handler));
#else
    constraints.reinit(DoFTools::extract_locally_relevant_dofs(dof_handler));
#endif
    VectorTools::interpolate_boundary_values(
      mapping, dof_handler, 0, g, constraints);
    constraints.close();
  }



  template <int dim>
  void
  laplace_cell_matrix(const FEValues<dim> &fe_values,
                      FullMatrix<double>  &cell_matrix)
  {
    cell_matrix = 0;
    for (const unsigned int q : fe_values.quadrature_point_indices())
      for (const unsigned int i : fe_values.dof_indices())
        for (const unsigned int j : fe_values.dof_indices())
          cell_matrix(i, j) += fe_values.shape_grad(i, q) *
                               fe_values.shape_grad(j, q) * fe_values.JxW(q);
  }



  template <int dim>
  void
  assemble_rhs(const Mapping<dim>                         &mapping,
               const DoFHandler<dim>                      &dof_handler,
               const AffineConstraints<double>            &constraints,
               const Function<dim>                        &f,
               LinearAlgebra::distributed::Vector<double> &rhs)
  {
    const FiniteElement<dim> &fe = dof_handler.get_fe();
    const QGauss<dim>         quadrature(fe.degree + 2);
    FEValues<dim>             fe_values(mapping,
                            fe,
                            quadrature,
                            update_values | update_gradients |
                              update_quadrature_points | update_JxW_values);

    const unsigned int dofs_per_cell = fe.n_dofs_per_cell();
    FullMatrix<double> cell_matrix(dofs_per_cell, dofs_per_cell);
    Vector<double>     cell_rhs(dofs_per_cell);
    std::vector<types::global_dof_index> local_dof_indices(dofs_per_cell);
    std::vector<double>                  f_values(quadrature.size());
    bool                                 have_cell_matrix = false;

    rhs = 0;
    for (const auto &cell : dof_handler.active_cell_iterators())
      if (cell->is_locally_owned())
        {
          fe_values.reinit(cell);
          if (!have_cell_matrix)
            {
              laplace_cell_matrix(fe_values, cell_matrix);
              have_cell_matrix = true;
            }
          f.value_list(fe_values.get_quadrature_points(), f_values);
          cell_rhs = 0;
          for (const unsigned int q : fe_values.quadrature_point_indices())
            for (const unsigned int i : fe_values.dof_indices())
              cell_rhs(i) +=
                fe_values.shape_value(i, q) * f_values[q] * fe_values.JxW(q);
          cell->get_dof_indices(local_dof_indices);
          constraints.distribute_local_to_global(cell_rhs,
                                                 local_dof_indices,
                                                 rhs,
                                                 cell_matrix);
        }
    rhs.compress(VectorOperation::add);
    constraints.distribute(rhs);
  }



  // @sect3{MPI and errors}

  InitFinalize::InitFinalize(char *program, const unsigned int threads)
    : args{program, nullptr}
    , argv(args)
    , mpi(argc, argv, threads > 0 ? threads : numbers::invalid_unsigned_int)
  {}



  std::string
  one_line(const std::exception &exc)
  {
    std::ostringstream text;
    if (const auto *e = dynamic_cast<const ExceptionBase *>(&exc))
      {
        e->print_info(text);
        if (text.str().find_first_not_of(" \n") == std::string::npos)
          text << e->get_exc_name();
      }
    else
      text << exc.what();
    std::string        line, word;
    std::istringstream words(text.str());
    while (words >> word)
      line += (line.empty() ? "" : " ") + word;
    return line;
  }



  void
  report_error(const std::exception &exc)
  {
    std::fflush(stdout);
    std::fprintf(stderr, "%s: %s\n", app_program(), one_line(exc).c_str());
    std::fflush(stderr);
  }



  // The programs run in 2D and 3D.
  template class Solution<2>;
  template class Solution<3>;
  template class RightHandSide<2>;
  template class RightHandSide<3>;
  template void
  make_mesh(const Parameters &, parallel::distributed::Triangulation<2> &);
  template void
  make_mesh(const Parameters &, parallel::distributed::Triangulation<3> &);
  template void
  distribute_dofs(const FiniteElement<2> &, DoFHandler<2> &);
  template void
  distribute_dofs(const FiniteElement<3> &, DoFHandler<3> &);
  template void
  make_boundary_constraints(const Mapping<2> &,
                            const DoFHandler<2> &,
                            const Function<2> &,
                            AffineConstraints<double> &);
  template void
  make_boundary_constraints(const Mapping<3> &,
                            const DoFHandler<3> &,
                            const Function<3> &,
                            AffineConstraints<double> &);
  template void
  laplace_cell_matrix(const FEValues<2> &, FullMatrix<double> &);
  template void
  laplace_cell_matrix(const FEValues<3> &, FullMatrix<double> &);
  template void
  assemble_rhs(const Mapping<2> &,
               const DoFHandler<2> &,
               const AffineConstraints<double> &,
               const Function<2> &,
               LinearAlgebra::distributed::Vector<double> &);
  template void
  assemble_rhs(const Mapping<3> &,
               const DoFHandler<3> &,
               const AffineConstraints<double> &,
               const Function<3> &,
               LinearAlgebra::distributed::Vector<double> &);
} // namespace DealiiApp
