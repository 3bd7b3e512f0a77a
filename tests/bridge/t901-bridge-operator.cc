/* The deal.II bridge: tpmg's LaplaceOperator against deal.II's assembled
 * Laplace matrix (active and level DoFs, double and float, its diagonal), the
 * CoarseSolver against the assembled coarse matrix, and the PatchSmoother on
 * a level with one vertex patch, where a smoothing step is an exact solve;
 * each also with a reaction term (Hierarchy's reaction c: deal.II's matrix of
 * (∇u, ∇v) + c (u, v)). */
#include <deal.II/base/mpi.h>
#include <deal.II/base/quadrature_lib.h>

#include <deal.II/dofs/dof_handler.h>
#include <deal.II/dofs/dof_tools.h>

#include <deal.II/fe/fe_q.h>
#include <deal.II/fe/fe_values.h>

#include <deal.II/lac/dynamic_sparsity_pattern.h>
#include <deal.II/lac/full_matrix.h>
#include <deal.II/lac/la_parallel_vector.h>
#include <deal.II/lac/sparse_matrix.h>
#include <deal.II/lac/sparsity_pattern.h>

#include <deal.II/multigrid/mg_tools.h>

#include <tpmg/dealii/coarse_solver.h>
#include <tpmg/dealii/context.h>
#include <tpmg/dealii/hierarchy.h>
#include <tpmg/dealii/laplace_operator.h>
#include <tpmg/dealii/patch_smoother.h>
#include <tpmg/dealii/renumbering.h>

#include "bridge-assembly.h"
#include "bridge-test.h"

#include <random>

using namespace dealii;

namespace
{
  /** Boundary flags of the lexicographic level with n_1d DoFs per direction. */
  std::vector<bool>
  boundary_flags(const int dim, const tpmg_index *n_1d)
  {
    std::vector<bool> flags(n_1d[0] * n_1d[1] * n_1d[2]);
    for (tpmg_index i = 0; i < static_cast<tpmg_index>(flags.size()); ++i)
      {
        const tpmg_index p[3] = {i % n_1d[0],
                                 i / n_1d[0] % n_1d[1],
                                 i / n_1d[0] / n_1d[1]};
        for (int d = 0; d < dim; ++d)
          flags[i] = flags[i] || p[d] == 0 || p[d] == n_1d[d] - 1;
      }
    return flags;
  }



  /** y = A x with Dirichlet columns eliminated and identity Dirichlet rows. */
  std::vector<double>
  reference_apply(const SparseMatrix<double> &A,
                  const std::vector<bool>    &boundary,
                  const std::vector<double>  &x)
  {
    std::vector<double> y(x.size(), 0.0);
    for (unsigned int i = 0; i < x.size(); ++i)
      {
        if (boundary[i])
          {
            y[i] = x[i];
            continue;
          }
        for (auto entry = A.begin(i); entry != A.end(i); ++entry)
          if (!boundary[entry->column()])
            y[i] += entry->value() * x[entry->column()];
      }
    return y;
  }



  template <typename Number>
  double
  relative_difference(const std::vector<double> &expected,
                      const LinearAlgebra::distributed::Vector<Number> &got)
  {
    double difference = 0, norm = 0;
    for (unsigned int i = 0; i < expected.size(); ++i)
      {
        difference += (expected[i] - got.local_element(i)) *
                      (expected[i] - got.local_element(i));
        norm += expected[i] * expected[i];
      }
    return std::sqrt(difference / norm);
  }



  /**
   * The operator of the active level and of level L-1 against the assembled
   * matrix on random vectors, in double (1e-12) and float (1e-5); its
   * diagonal; and the coarse solver.
   */
  template <int dim>
  void
  check_operator(const unsigned int k,
                 const unsigned int refinements,
                 const double       reaction = 0.)
  {
    const std::string what = std::to_string(dim) + "D Q" + std::to_string(k) +
                             " c " + std::to_string(reaction);
    Triangulation<dim> tria(
      Triangulation<dim>::limit_level_difference_at_vertices);
    const std::vector<unsigned int> cells =
      dim == 2 ? std::vector<unsigned int>{2, 3} :
                 std::vector<unsigned int>{2, 1, 1};
    Point<dim> lower, upper;
    for (unsigned int d = 0; d < dim; ++d)
      {
        lower[d] = d == 1 ? -1.0 : 0.25;
        upper[d] = d == 0 ? 2.0 : 0.5;
      }
    bridge_test::make_mesh(tria, cells, lower, upper, refinements);
    const FE_Q<dim> fe(k);
    DoFHandler<dim> dof_handler(tria);
    dof_handler.distribute_dofs(fe);
    dof_handler.distribute_mg_dofs();
    tpmg::dealii::renumber_lexicographic(dof_handler);
    tpmg::dealii::Context        context("cpu", 1);
    tpmg::dealii::Hierarchy<dim> hierarchy(dof_handler, context, 0, reaction);

    std::mt19937                           random(k + 10 * dim);
    std::uniform_real_distribution<double> uniform(-1.0, 1.0);
    for (const unsigned int level :
         {numbers::invalid_unsigned_int, refinements - 1, 0u})
      {
        const std::string where =
          what + (level == numbers::invalid_unsigned_int ?
                    std::string(", active") :
                    ", level " + std::to_string(level));
        SparsityPattern      sparsity;
        SparseMatrix<double> A;
        bridge_test::assemble_laplace(dof_handler, level, sparsity, A, reaction);
        tpmg_index n_1d[3] = {1, 1, 1};
        tpmg_grid_level_size(hierarchy.get_grid(),
                             hierarchy.tpmg_level(level),
                             nullptr,
                             n_1d);
        const std::vector<bool> boundary = boundary_flags(dim, n_1d);

        tpmg::dealii::LaplaceOperator<dim, double> op(hierarchy, level);
        tpmg::dealii::LaplaceOperator<dim, float>  op_float(hierarchy, level);
        BRIDGE_CHECK(op.m() == A.m() && op.n() == A.n(),
                     where << ": size " << op.m() << ", deal.II " << A.m());
        LinearAlgebra::distributed::Vector<double> x, y, z;
        LinearAlgebra::distributed::Vector<float>  x_float, y_float;
        op.initialize_dof_vector(x);
        op.initialize_dof_vector(y);
        op.initialize_dof_vector(z);
        op_float.initialize_dof_vector(x_float);
        op_float.initialize_dof_vector(y_float);
        for (unsigned int sample = 0; sample < 3; ++sample)
          {
            std::vector<double> x_host(A.m());
            for (unsigned int i = 0; i < x_host.size(); ++i)
              {
                x_host[i]                = uniform(random);
                x.local_element(i)       = x_host[i];
                x_float.local_element(i) = x_host[i];
              }
            const std::vector<double> expected =
              reference_apply(A, boundary, x_host);
            op.vmult(y, x);
            BRIDGE_CHECK(relative_difference(expected, y) < 1e-12,
                         where
                           << ": vmult differs from the assembled matrix by "
                           << relative_difference(expected, y));
            op.Tvmult(y, x);
            BRIDGE_CHECK(relative_difference(expected, y) < 1e-12,
                         where << ": Tvmult differs by "
                               << relative_difference(expected, y));
            z = x;
            op.vmult_add(z, x);
            std::vector<double> expected_add = expected;
            for (unsigned int i = 0; i < expected.size(); ++i)
              expected_add[i] += x_host[i];
            BRIDGE_CHECK(relative_difference(expected_add, z) < 1e-12,
                         where << ": vmult_add differs by "
                               << relative_difference(expected_add, z));
            op_float.vmult(y_float, x_float);
            BRIDGE_CHECK(relative_difference(expected, y_float) < 1e-5,
                         where << ": float vmult differs by "
                               << relative_difference(expected, y_float));
          }

        op.compute_diagonal();
        double largest = 0;
        for (unsigned int i = 0; i < A.m(); ++i)
          {
            const double expected = boundary[i] ? 1.0 : A.diag_element(i);
            largest =
              std::max(largest,
                       std::abs(op.el(i, i) - expected) / std::abs(expected));
            largest =
              std::max(largest,
                       std::abs(
                         op.get_matrix_diagonal_inverse()->get_vector()(i) *
                           expected -
                         1.0));
          }
        BRIDGE_CHECK(largest < 1e-12,
                     where << ": diagonal differs by " << largest);

        if (level == 0)
          {
            // the coarse solver inverts the interior rows
            tpmg::dealii::CoarseSolver<dim, double>    coarse(hierarchy);
            LinearAlgebra::distributed::Vector<double> b;
            op.initialize_dof_vector(b);
            for (unsigned int i = 0; i < A.m(); ++i)
              b.local_element(i) = boundary[i] ? 0.0 : uniform(random);
            coarse(0, x, b);
            std::vector<double> x_host(A.m());
            for (unsigned int i = 0; i < A.m(); ++i)
              x_host[i] = x.local_element(i);
            std::vector<double> b_host(A.m());
            for (unsigned int i = 0; i < A.m(); ++i)
              b_host[i] = boundary[i] ? x_host[i] : b.local_element(i);
            const std::vector<double> Ax = reference_apply(A, boundary, x_host);
            double                    error = 0, norm = 0;
            for (unsigned int i = 0; i < A.m(); ++i)
              {
                error += (Ax[i] - b_host[i]) * (Ax[i] - b_host[i]);
                norm += b_host[i] * b_host[i];
                BRIDGE_CHECK(!boundary[i] || x_host[i] == 0.0,
                             where << ": coarse solution " << x_host[i]
                                   << " on Dirichlet DoF " << i);
              }
            // (Q1 on 2 x 1 x 1 coarse cells has no interior DoF)
            BRIDGE_CHECK(norm == 0 || std::sqrt(error / norm) < 1e-10,
                         where << ": coarse solve residual "
                               << std::sqrt(error / norm));
            BRIDGE_CHECK_THROWS(coarse(1, x, b),
                                tpmg::dealii::ExcUnsupported,
                                "coarsest level");
          }
      }
  }



  /**
   * On one coarse cell refined once there is one interior vertex, and its
   * patch holds every interior DoF: one smoothing step from zero solves the
   * level exactly, in either colour order.
   */
  template <int dim>
  void
  check_smoother(const unsigned int k, const double reaction = 0.)
  {
    const std::string what = std::to_string(dim) + "D Q" + std::to_string(k) +
                             " c " + std::to_string(reaction);
    Triangulation<dim> tria(
      Triangulation<dim>::limit_level_difference_at_vertices);
    bridge_test::make_mesh(tria,
                           std::vector<unsigned int>(dim, 1),
                           Point<dim>(),
                           dim == 2 ? Point<dim>(1.0, 2.0) :
                                      Point<dim>(1.0, 2.0, 0.5),
                           1);
    const FE_Q<dim> fe(k);
    DoFHandler<dim> dof_handler(tria);
    dof_handler.distribute_dofs(fe);
    dof_handler.distribute_mg_dofs();
    tpmg::dealii::renumber_lexicographic(dof_handler);
    tpmg::dealii::Context        context;
    tpmg::dealii::Hierarchy<dim> hierarchy(dof_handler, context, 0, reaction);
    SparsityPattern              sparsity;
    SparseMatrix<double>         A;
    bridge_test::assemble_laplace(dof_handler, 1, sparsity, A, reaction);
    tpmg_index n_1d[3] = {1, 1, 1};
    tpmg_grid_level_size(hierarchy.get_grid(), 1, nullptr, n_1d);
    const std::vector<bool> boundary = boundary_flags(dim, n_1d);

    std::mt19937                           random(k);
    std::uniform_real_distribution<double> uniform(-1.0, 1.0);
    for (const tpmg_smoother_variant variant :
         {TPMG_SMOOTHER_GLOBAL, TPMG_SMOOTHER_SEPARATE, TPMG_SMOOTHER_FUSED})
      {
        typename tpmg::dealii::PatchSmoother<dim, double>::AdditionalData data;
        data.variant = variant;
        tpmg::dealii::PatchSmoother<dim, double>   smoother(hierarchy, data);
        LinearAlgebra::distributed::Vector<double> u, rhs;
        tpmg::dealii::LaplaceOperator<dim, double>(hierarchy, 1)
          .initialize_dof_vector(rhs);
        u.reinit(rhs);
        for (unsigned int i = 0; i < A.m(); ++i)
          {
            rhs.local_element(i) = boundary[i] ? 0.0 : uniform(random);
            u.local_element(i)   = 1e6; // apply() must not read u
          }
        for (const bool post : {false, true})
          {
            if (post)
              {
                u = 0;
                smoother.smooth(1, u, rhs);
              }
            else
              smoother.apply(1, u, rhs);
            std::vector<double> u_host(A.m());
            for (unsigned int i = 0; i < A.m(); ++i)
              u_host[i] = u.local_element(i);
            const std::vector<double> Au = reference_apply(A, boundary, u_host);
            double                    error = 0, norm = 0;
            for (unsigned int i = 0; i < A.m(); ++i)
              if (!boundary[i])
                {
                  error += (Au[i] - rhs.local_element(i)) *
                           (Au[i] - rhs.local_element(i));
                  norm += rhs.local_element(i) * rhs.local_element(i);
                }
              else
                BRIDGE_CHECK(u_host[i] == 0.0,
                             what << ": smoothing changed Dirichlet DoF " << i
                                  << " to " << u_host[i]);
            BRIDGE_CHECK(std::sqrt(error / norm) < 1e-10,
                         what
                           << ", variant " << variant
                           << (post ? ", smooth()" : ", apply()")
                           << ": the one-patch smoother is not exact, residual "
                           << std::sqrt(error / norm));
          }
        BRIDGE_CHECK_THROWS(smoother.smooth(0, u, rhs),
                            tpmg::dealii::ExcUnsupported,
                            "CoarseSolver");
      }
  }
} // namespace



int
main(int argc, char **argv)
{
  Utilities::MPI::MPI_InitFinalize mpi(argc, argv, 1);
  try
    {
      for (const unsigned int k : {1u, 2u, 3u, 4u, 6u})
        check_operator<2>(k, 2);
      for (const unsigned int k : {1u, 2u, 3u, 4u})
        check_operator<3>(k, 2);
      for (const unsigned int k : {1u, 2u, 5u})
        {
          check_smoother<2>(k);
          check_smoother<3>(k);
        }
      // a reaction term: stiffness comparable to the mass, and the mass dominant
      for (const double c : {37.5, 1e5})
        {
          check_operator<2>(2, 2, c);
          check_operator<2>(3, 2, c);
          check_operator<3>(2, 2, c);
          check_smoother<2>(2, c);
          check_smoother<3>(3, c);
        }
    }
  catch (const std::exception &e)
    {
      std::cerr << "unexpected exception: " << e.what() << std::endl;
      return 1;
    }
  return bridge_test::result();
}
