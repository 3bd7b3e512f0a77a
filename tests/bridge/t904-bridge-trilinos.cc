/* TrilinosCoarseSolver, the assembled coarse matrix solved by Trilinos (ML's
 * AMG in CG, or Amesos KLU), on coarse meshes of many cells (3D Q2 with
 * 6x6x6 cells, 2D Q3 with 20x15): against a dense LU solve of the interior
 * matrix deal.II assembles (bridge-assembly.h) and against tpmg's
 * CoarseSolver; float levels against double to the rounding of the result;
 * in deal.II's Multigrid with tpmg's smoother and operator, the same
 * iterations (+-1) as with tpmg's CoarseSolver (GMRES, CG, float levels); bad
 * input refused with a message. In a build without Trilinos: the refusal. */
#include <deal.II/base/mpi.h>
#include <deal.II/base/quadrature_lib.h>

#include <deal.II/distributed/tria.h>

#include <deal.II/dofs/dof_handler.h>

#include <deal.II/fe/fe_q.h>
#include <deal.II/fe/fe_values.h>

#include <deal.II/lac/la_parallel_vector.h>
#include <deal.II/lac/lapack_full_matrix.h>
#include <deal.II/lac/solver_cg.h>
#include <deal.II/lac/solver_control.h>
#include <deal.II/lac/solver_gmres.h>
#include <deal.II/lac/vector.h>

#include <deal.II/multigrid/mg_constrained_dofs.h>
#include <deal.II/multigrid/mg_matrix.h>
#include <deal.II/multigrid/mg_transfer_matrix_free.h>
#include <deal.II/multigrid/multigrid.h>

#include <tpmg/dealii/coarse_solver.h>
#include <tpmg/dealii/context.h>
#include <tpmg/dealii/exceptions.h>
#include <tpmg/dealii/hierarchy.h>
#include <tpmg/dealii/laplace_operator.h>
#include <tpmg/dealii/patch_smoother.h>
#include <tpmg/dealii/renumbering.h>
#include <tpmg/dealii/trilinos_coarse_solver.h>

#include "bridge-assembly.h"
#include "bridge-test.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

using namespace dealii;

namespace
{
  using VectorType = LinearAlgebra::distributed::Vector<double>;
  template <int dim, typename Number>
  using Trilinos = tpmg::dealii::TrilinosCoarseSolver<dim, Number>;
  using Method   = tpmg::dealii::TrilinosCoarseMethod;

  constexpr double tolerance = 1e-9;

  /** The test mesh: coarse cells, refinements. */
  template <int dim>
  struct Mesh
  {
    std::vector<unsigned int> cells;
    Point<dim>                lower, upper;
    unsigned int              refinements;
  };

  /** A renumbered FE_Q(k) problem on a parallel::distributed mesh (one rank)
   *  with f = 1 on the active mesh, zero on Dirichlet DoFs. */
  template <int dim>
  struct Problem
  {
    Problem(const Mesh<dim> &mesh, const unsigned int k, const double reaction = 0.)
      : reaction(reaction)
      , tria(MPI_COMM_WORLD,
             Triangulation<dim>::limit_level_difference_at_vertices,
             parallel::distributed::Triangulation<
               dim>::construct_multigrid_hierarchy)
      , fe(k)
      , dof_handler(tria)
      , context("cpu", 1)
    {
      bridge_test::make_mesh(
        tria, mesh.cells, mesh.lower, mesh.upper, mesh.refinements);
      dof_handler.distribute_dofs(fe);
      dof_handler.distribute_mg_dofs();
      tpmg::dealii::renumber_lexicographic(dof_handler);
      mg_constrained_dofs.initialize(dof_handler);
      mg_constrained_dofs.make_zero_boundary_constraints(dof_handler, {0});
      hierarchy = std::make_unique<tpmg::dealii::Hierarchy<dim>>(dof_handler,
                                                                 context,
                                                                 0,
                                                                 reaction);

      rhs.reinit(hierarchy->get_partitioner());
      const QGauss<dim>                    quadrature(k + 1);
      FEValues<dim>                        fe_values(fe,
                              quadrature,
                              update_values | update_JxW_values);
      std::vector<types::global_dof_index> indices(fe.n_dofs_per_cell());
      for (const auto &cell : dof_handler.active_cell_iterators())
        {
          fe_values.reinit(cell);
          cell->get_dof_indices(indices);
          for (unsigned int q = 0; q < quadrature.size(); ++q)
            for (unsigned int i = 0; i < indices.size(); ++i)
              rhs(indices[i]) += fe_values.shape_value(i, q) * fe_values.JxW(q);
        }
      for (const auto index :
           mg_constrained_dofs.get_boundary_indices(mesh.refinements))
        rhs(index) = 0;
    }

    double                                        reaction;
    parallel::distributed::Triangulation<dim>     tria;
    FE_Q<dim>                                     fe;
    DoFHandler<dim>                               dof_handler;
    MGConstrainedDoFs                             mg_constrained_dofs;
    tpmg::dealii::Context                         context;
    std::unique_ptr<tpmg::dealii::Hierarchy<dim>> hierarchy;
    VectorType                                    rhs;
  };



  /** The interior DoFs of @p level and the interior block of the Laplace
   *  matrix deal.II assembles (without constraints), LU-factorized. */
  template <int dim>
  struct DenseReference
  {
    DenseReference(const Problem<dim> &problem, const unsigned int level)
    {
      SparsityPattern      sparsity;
      SparseMatrix<double> matrix;
      bridge_test::assemble_laplace(
        problem.dof_handler, level, sparsity, matrix, problem.reaction);
      const IndexSet &boundary =
        problem.mg_constrained_dofs.get_boundary_indices(level);
      for (types::global_dof_index i = 0; i < matrix.m(); ++i)
        if (!boundary.is_element(i))
          interior.push_back(i);
      const unsigned int n = interior.size();
      a_ii.reinit(n, n);
      for (unsigned int i = 0; i < n; ++i)
        for (unsigned int j = 0; j < n; ++j)
          a_ii(i, j) = matrix.el(interior[i], interior[j]);
      lu = a_ii;
      lu.compute_lu_factorization();
    }

    /** src restricted to the interior. */
    Vector<double> restrict(const VectorType &v) const
    {
      Vector<double> v_i(interior.size());
      for (unsigned int i = 0; i < interior.size(); ++i)
        v_i(i) = v(interior[i]);
      return v_i;
    }

    /** A_II^{-1} src_I. */
    Vector<double>
    solve(const VectorType &src) const
    {
      Vector<double> x = restrict(src);
      lu.solve(x);
      return x;
    }

    /** ||src_I - A_II x_I|| / ||src_I||. */
    double
    relative_residual(const VectorType &x, const VectorType &src) const
    {
      const Vector<double> x_i = restrict(x), b_i = restrict(src);
      Vector<double>       r(b_i.size());
      a_ii.vmult(r, x_i);
      r -= b_i;
      return r.l2_norm() / b_i.l2_norm();
    }

    std::vector<types::global_dof_index> interior;
    LAPACKFullMatrix<double>             a_ii, lu;
  };



  /** The largest |x_i| over the Dirichlet DoFs of @p level. */
  template <int dim, typename Number>
  double
  max_on_boundary(const Problem<dim>                               &problem,
                  const unsigned int                                level,
                  const LinearAlgebra::distributed::Vector<Number> &x)
  {
    double result = 0;
    for (const auto i : problem.mg_constrained_dofs.get_boundary_indices(level))
      result = std::max(result, std::abs(static_cast<double>(x(i))));
    return result;
  }



  /**
   * The coarse solve of @p mesh with FE_Q(k), on a right-hand side of random
   * numbers (the Dirichlet entries too, which the solve must ignore):
   * Method::direct against the dense LU solve and tpmg's CoarseSolver to
   * 1e-10, Method::amg to the requested relative residual of the assembled
   * matrix; zero on the Dirichlet DoFs; float vectors give the double result
   * rounded to float. With a reaction c, the same for deal.II's matrix of
   * (∇u, ∇v) + c (u, v), tpmg's CoarseSolver on a Hierarchy of reaction c and
   * TrilinosCoarseSolver's AdditionalData::reaction c.
   */
  template <int dim>
  void
  check_coarse_solve(const Mesh<dim> &mesh,
                     const unsigned int k,
                     const double       reaction = 0.)
  {
    const std::string what = std::to_string(dim) + "D Q" + std::to_string(k) +
                             " c " + std::to_string(reaction);
    Problem<dim>      problem(mesh, k, reaction);
    const unsigned int level = 0;
    const DenseReference<dim> reference(problem, level);

    VectorType   src(problem.hierarchy->get_partitioner(level));
    std::mt19937 random(2026);
    std::uniform_real_distribution<double> uniform(-1, 1);
    for (auto &value : src)
      value = uniform(random);
    VectorType dst(src), dst_tpmg(src);

    const Trilinos<dim, double> direct(problem.dof_handler,
                                       problem.mg_constrained_dofs,
                                       level,
                                       {Method::direct, 1e-6, 1000, reaction});
    BRIDGE_CHECK(direct.m() == problem.dof_handler.n_dofs(level),
                 what << ": the matrix has " << direct.m() << " rows, level "
                      << level << " " << problem.dof_handler.n_dofs(level)
                      << " DoFs");
    direct(level, dst, src);
    const Vector<double> x_ref = reference.solve(src);
    Vector<double>       error = reference.restrict(dst);
    error -= x_ref;
    BRIDGE_CHECK(error.l2_norm() <= 1e-10 * x_ref.l2_norm(),
                 what << ", " << reference.interior.size()
                      << " interior DoFs: KLU differs from the dense solve by "
                      << error.l2_norm() / x_ref.l2_norm() << " (relative)");
    BRIDGE_CHECK(max_on_boundary(problem, level, dst) == 0,
                 what << ": KLU's result is "
                      << max_on_boundary(problem, level, dst)
                      << " on a Dirichlet DoF, expected 0");
    BRIDGE_CHECK(direct.last_n_iterations() == 0,
                 what << ": KLU reports " << direct.last_n_iterations()
                      << " iterations");
    const tpmg::dealii::CoarseSolver<dim, double> tpmg_coarse(
      *problem.hierarchy);
    tpmg_coarse(level, dst_tpmg, src);
    VectorType difference(dst);
    difference -= dst_tpmg;
    BRIDGE_CHECK(difference.l2_norm() <= 1e-10 * dst_tpmg.l2_norm(),
                 what << ": KLU differs from tpmg's CoarseSolver by "
                      << difference.l2_norm() / dst_tpmg.l2_norm());

    unsigned int previous_iterations = 0;
    for (const double tol : {1e-4, 1e-8})
      {
        const Trilinos<dim, double> amg(problem.dof_handler,
                                        problem.mg_constrained_dofs,
                                        level,
                                        {Method::amg, tol, 1000, reaction});
        dst = 0;
        amg(level, dst, src);
        const double residual = reference.relative_residual(dst, src);
        BRIDGE_CHECK(residual <= tol,
                     what << ": AMG-CG to " << tol
                          << " reached a relative residual of " << residual
                          << " of the assembled matrix");
        BRIDGE_CHECK(max_on_boundary(problem, level, dst) == 0,
                     what << ": AMG-CG's result is "
                          << max_on_boundary(problem, level, dst)
                          << " on a Dirichlet DoF, expected 0");
        BRIDGE_CHECK(amg.last_n_iterations() >= 1 &&
                       amg.last_n_iterations() >= previous_iterations,
                     what << ": AMG-CG took " << amg.last_n_iterations()
                          << " iterations to " << tol << " after "
                          << previous_iterations << " to a looser tolerance");
        previous_iterations = amg.last_n_iterations();
      }

    // float vectors: the double solve of the float input, rounded
    for (const auto method : {Method::direct, Method::amg})
      {
        LinearAlgebra::distributed::Vector<float> src_float, dst_float;
        src_float.reinit(src.get_partitioner());
        dst_float.reinit(src.get_partitioner());
        src_float = src;
        VectorType src_rounded(src);
        src_rounded = src_float;
        const Trilinos<dim, float>  solver_float(problem.dof_handler,
                                                problem.mg_constrained_dofs,
                                                level,
                                                {method, 1e-8, 1000, reaction});
        const Trilinos<dim, double> solver_double(problem.dof_handler,
                                                  problem.mg_constrained_dofs,
                                                  level,
                                                  {method, 1e-8, 1000, reaction});
        solver_float(level, dst_float, src_float);
        solver_double(level, dst, src_rounded);
        double worst = 0;
        for (unsigned int i = 0; i < dst.locally_owned_size(); ++i)
          worst = std::max(worst,
                           std::abs(dst_float.local_element(i) -
                                    dst.local_element(i)) -
                             0x1p-24 * std::abs(dst.local_element(i)));
        BRIDGE_CHECK(worst <= 0,
                     what << ", " << (method == Method::direct ? "KLU" : "AMG")
                          << ": the float result differs from the double "
                             "one by "
                          << worst << " more than float rounding");
      }
  }



  /**
   * deal.II's Multigrid with tpmg's LaplaceOperator and PatchSmoother in
   * precision Number and @p coarse as coarse solver, preconditioning
   * FGMRES or CG to tolerance. Returns the iterations; a solve that does not
   * converge is a failure.
   */
  template <int dim, typename Number>
  unsigned int
  pipeline_solve(
    const Problem<dim>                                                 &problem,
    const bool                                                          cg,
    const MGCoarseGridBase<LinearAlgebra::distributed::Vector<Number>> &coarse,
    const std::string                                                  &what)
  {
    using LevelVector = LinearAlgebra::distributed::Vector<Number>;
    typename tpmg::dealii::PatchSmoother<dim, Number>::AdditionalData
      smoother_data;
    smoother_data.symmetric      = cg;
    const auto        &hierarchy = *problem.hierarchy;
    const unsigned int max_level = hierarchy.max_level();
    MGLevelObject<tpmg::dealii::LaplaceOperator<dim, Number>> mg_matrices(
      0, max_level);
    for (unsigned int level = 0; level <= max_level; ++level)
      mg_matrices[level].initialize(hierarchy, level);
    mg::Matrix<LevelVector>                  mg_matrix(mg_matrices);
    tpmg::dealii::PatchSmoother<dim, Number> smoother(hierarchy, smoother_data);
    MGTransferMatrixFree<dim, Number> transfer(problem.mg_constrained_dofs);
    transfer.build(problem.dof_handler, hierarchy.get_level_partitioners());
    Multigrid<LevelVector> mg(
      mg_matrix, coarse, transfer, smoother, smoother, 0, max_level);
    PreconditionMG<dim, LevelVector, MGTransferMatrixFree<dim, Number>>
      preconditioner(problem.dof_handler, mg, transfer);

    const tpmg::dealii::LaplaceOperator<dim, double> system(hierarchy);
    SolverControl control(100, tolerance * problem.rhs.l2_norm());
    VectorType    solution(problem.rhs);
    solution = 0;
    try
      {
        if (cg)
          SolverCG<VectorType>(control).solve(system,
                                              solution,
                                              problem.rhs,
                                              preconditioner);
        else
          SolverFGMRES<VectorType>(control,
                                   SolverFGMRES<VectorType>::AdditionalData(30))
            .solve(system, solution, problem.rhs, preconditioner);
      }
    catch (const SolverControl::NoConvergence &)
      {
        BRIDGE_CHECK(false,
                     what << ": no convergence in " << control.last_step()
                          << " iterations, residual " << control.last_value());
      }
    return control.last_step();
  }



  /** The whole solve with each coarse solver: iterations within one of
   *  tpmg's CoarseSolver, for GMRES and CG and double and float levels. */
  template <int dim, typename Number>
  void
  check_pipeline(const Mesh<dim> &mesh, const unsigned int k)
  {
    const Problem<dim> problem(mesh, k);
    const std::string  what = std::to_string(dim) + "D Q" + std::to_string(k) +
                             (std::is_same_v<Number, float> ? ", float" : "");
    const unsigned int level = problem.hierarchy->min_level();
    const tpmg::dealii::CoarseSolver<dim, Number> tpmg_coarse(
      *problem.hierarchy);
    const Trilinos<dim, Number> amg(problem.dof_handler,
                                    problem.mg_constrained_dofs,
                                    level,
                                    {Method::amg});
    const Trilinos<dim, Number> direct(problem.dof_handler,
                                       problem.mg_constrained_dofs,
                                       level,
                                       {Method::direct});
    for (const bool cg : {false, true})
      {
        const std::string  solver = what + (cg ? ", CG" : ", FGMRES");
        const unsigned int reference =
          pipeline_solve<dim, Number>(problem, cg, tpmg_coarse, solver);
        for (const auto *coarse : {&amg, &direct})
          {
            const std::string name =
              coarse == &amg ? "trilinos-amg" : "trilinos-direct";
            const unsigned int iterations =
              pipeline_solve<dim, Number>(problem, cg, *coarse, solver);
            BRIDGE_CHECK(iterations + 1 >= reference &&
                           iterations <= reference + 1,
                         solver << ": " << iterations << " iterations with "
                                << name << " where tpmg's coarse solver takes "
                                << reference);
          }
      }
  }



  /** Bad input: refused with a message that names it. */
  void
  check_errors()
  {
    const Mesh<2> mesh{{3, 2}, Point<2>(0, 0), Point<2>(1.5, 1), 1};
    Problem<2>    problem(mesh, 2);
    using Solver = Trilinos<2, double>;
    Solver     empty;
    VectorType src(problem.hierarchy->get_partitioner(0)), dst(src);
    BRIDGE_CHECK_THROWS(empty(0, dst, src), ExceptionBase, "not initialized");

    const Solver solver(problem.dof_handler, problem.mg_constrained_dofs, 0);
    const auto   n = problem.dof_handler.n_dofs(0);
    VectorType   wrong(n + 1);
    BRIDGE_CHECK_THROWS(solver(0, dst, wrong),
                        tpmg::dealii::ExcUnsupported,
                        "a vector of size " + std::to_string(n + 1));
    BRIDGE_CHECK_THROWS(solver(0, wrong, src),
                        tpmg::dealii::ExcUnsupported,
                        "where level 0 has " + std::to_string(n) + " DoFs");
    VectorType fine(problem.hierarchy->get_partitioner(1)), fine_dst(fine);
    BRIDGE_CHECK_THROWS(solver(1, fine_dst, fine),
                        tpmg::dealii::ExcUnsupported,
                        "a coarse solve on level 1, but the matrix is that of "
                        "level 0");

    Solver other;
    BRIDGE_CHECK_THROWS(other.initialize(problem.dof_handler,
                                         problem.mg_constrained_dofs,
                                         5),
                        tpmg::dealii::ExcUnsupported,
                        "level 5 has no level DoFs (the mesh has 2 levels");
    for (const double tol : {0., 1., std::nan("")})
      BRIDGE_CHECK_THROWS(other.initialize(problem.dof_handler,
                                           problem.mg_constrained_dofs,
                                           0,
                                           {Solver::Method::amg, tol}),
                          tpmg::dealii::ExcUnsupported,
                          "the tolerance must lie in (0, 1)");
    BRIDGE_CHECK_THROWS(other.initialize(problem.dof_handler,
                                         problem.mg_constrained_dofs,
                                         0,
                                         {Solver::Method::amg, 1e-6, 0}),
                        tpmg::dealii::ExcUnsupported,
                        "max_iterations 0");
    BRIDGE_CHECK(other.m() == 0,
                 "a refused initialize() left a matrix of " << other.m()
                                                            << " rows");
  }



  /** Without Trilinos the class refuses, naming what is missing. */
  void
  check_without_trilinos()
  {
    const Mesh<2>       mesh{{2, 2}, Point<2>(0, 0), Point<2>(1, 1), 1};
    Problem<2>          problem(mesh, 2);
    Trilinos<2, double> solver;
    BRIDGE_CHECK_THROWS(solver.initialize(problem.dof_handler,
                                          problem.mg_constrained_dofs,
                                          0),
                        tpmg::dealii::ExcUnsupported,
                        "this build of the tpmg bridge has no Trilinos");
  }
} // namespace



int
main(int argc, char **argv)
{
  Utilities::MPI::MPI_InitFinalize mpi(argc, argv, 1);
  try
    {
      if (!Trilinos<2, double>::is_available())
        {
          check_without_trilinos();
          return bridge_test::result();
        }
      // coarse meshes of many cells, with refinements above: level 0 has
      // 2197 DoFs in 3D, 2806 in 2D, more than the 2000 below which
      // deal.II's ML setup solves directly (ML's coarse: max size)
      const Mesh<3> cube{{6, 6, 6}, Point<3>(0, 0, 0), Point<3>(1, 1, 1), 1};
      const Mesh<2> rectangle{{20, 15},
                              Point<2>(-0.5, 0.25),
                              Point<2>(1.75, 2),
                              2};
      check_coarse_solve(cube, 2);
      check_coarse_solve(rectangle, 3);
      check_coarse_solve(cube, 2, 250.);
      check_coarse_solve(rectangle, 3, 1e4);
      check_pipeline<3, double>(cube, 2);
      check_pipeline<2, double>(rectangle, 3);
      check_pipeline<2, float>(rectangle, 3);
      check_errors();
    }
  catch (const std::exception &e)
    {
      std::cerr << "unexpected exception: " << e.what() << std::endl;
      return 1;
    }
  return bridge_test::result();
}
