/* The deal.II bridge of tpmg: the matrix-free level operator. */
#ifndef tpmg_dealii_laplace_operator_h
#define tpmg_dealii_laplace_operator_h

#include <deal.II/base/memory_space.h>
#include <deal.II/base/numbers.h>
#include <deal.II/base/types.h>

#include <deal.II/lac/diagonal_matrix.h>
#include <deal.II/lac/la_parallel_vector.h>

#include <tpmg.h>
#include <tpmg/dealii/hierarchy.h>

#include <cmath>
#include <cstddef>
#include <memory>
#include <random>
#include <sstream>
#include <string>

namespace tpmg::dealii
{
  namespace internal
  {
    class Staging;
  }

  /**
   * tpmg's matrix-free Laplace operator of one level (or of the active DoFs),
   * applied by sum factorization in the Hierarchy's Context, for vectors of
   * type LinearAlgebra::distributed::Vector<Number, MemorySpace> in
   * lexicographic numbering.
   *
   * Rows and columns of interior DoFs are those of the finite element Laplace
   * matrix (of -∇·(a∇u) where the Hierarchy has a coefficient a: exact on the
   * finest level, a at the points of QGauss(k+1) as step-37's MatrixFree
   * operator; coarser levels rediscretized with each cell's mean of a, see
   * tpmg_grid_set_coefficient), plus c times the mass matrix where the
   * Hierarchy has a reaction c;
   * a Dirichlet row is an identity row and Dirichlet columns are
   * eliminated: (A u)_B = u_B, and u_B does not enter (A u)_I. This is what
   * deal.II's MatrixFreeOperators::LaplaceOperator does on a level with the
   * boundary indices of MGConstrainedDoFs (constrained rows identity), so it
   * works with MGTransferMatrixFree (which zeroes coarse Dirichlet entries).
   *
   * Usable as a level matrix through mg::Matrix (vmult, Tvmult, vmult_add,
   * Tvmult_add), as the system matrix of deal.II's solvers, and with
   * PreconditionChebyshev (compute_diagonal(), get_matrix_diagonal_inverse(),
   * el() on the diagonal).
   *
   * Vectors are read through get_values() at every call (deal.II may
   * reallocate them): their locally owned entries, all DoFs of the level on
   * one rank. Host vectors with a CPU context and device vectors with a CUDA
   * context are passed through; host vectors with a CUDA context go through
   * a device buffer.
   */
  template <int dim,
            typename Number,
            typename MemorySpace = ::dealii::MemorySpace::Host>
  class LaplaceOperator : public internal::EnableObserverPointer
  {
  public:
    using VectorType =
      ::dealii::LinearAlgebra::distributed::Vector<Number, MemorySpace>;
    using value_type = Number;
    using size_type  = ::dealii::types::global_dof_index;

    /** An empty operator; call initialize(). */
    LaplaceOperator();

    /** The operator of @p level; see initialize(). */
    LaplaceOperator(
      const Hierarchy<dim> &hierarchy,
      const unsigned int    level = ::dealii::numbers::invalid_unsigned_int);

    ~LaplaceOperator() override;

    LaplaceOperator(const LaplaceOperator &) = delete;
    LaplaceOperator &
    operator=(const LaplaceOperator &) = delete;

    /**
     * Make the operator of deal.II level @p level of @p hierarchy, or of the
     * active DoFs for numbers::invalid_unsigned_int, in the precision of
     * Number (double or float).
     */
    void
    initialize(
      const Hierarchy<dim> &hierarchy,
      const unsigned int    level = ::dealii::numbers::invalid_unsigned_int);

    /** Release the tpmg operator and the diagonal. */
    void
    clear();

    /** The level (numbers::invalid_unsigned_int for the active DoFs). */
    unsigned int
    get_level() const;

    /** Rows: all DoFs of the level. */
    size_type
    m() const;

    /** Columns: all DoFs of the level. */
    size_type
    n() const;

    /** dst = A src. */
    void
    vmult(VectorType &dst, const VectorType &src) const;

    /** dst = A^T src = A src (A is symmetric). */
    void
    Tvmult(VectorType &dst, const VectorType &src) const;

    /** dst += A src. */
    void
    vmult_add(VectorType &dst, const VectorType &src) const;

    /** dst += A^T src. */
    void
    Tvmult_add(VectorType &dst, const VectorType &src) const;

    /**
     * The coupling across the refinement edge of a level, for deal.II's
     * MatrixFreeOperators::MGInterfaceOperator (step-37's edge matrices,
     * Multigrid::set_edge_matrices()): zero, since tpmg's meshes are refined
     * globally and have no refinement edge. dst = 0.
     */
    void
    vmult_interface_down(VectorType &dst, const VectorType &src) const;

    /** The transpose of vmult_interface_down(): dst = 0. */
    void
    vmult_interface_up(VectorType &dst, const VectorType &src) const;

    /** Initialize @p vector with the level's layout
     * (Hierarchy::get_partitioner()). */
    void
    initialize_dof_vector(VectorType &vector) const;

    /**
     * Compute the diagonal of the operator (1 on Dirichlet rows) and its
     * inverse, for PreconditionChebyshev and Jacobi smoothers.
     */
    void
    compute_diagonal();

    /** The diagonal; compute_diagonal() must have been called. */
    const std::shared_ptr<::dealii::DiagonalMatrix<VectorType>> &
    get_matrix_diagonal() const;

    /** The inverse diagonal; compute_diagonal() must have been called. */
    const std::shared_ptr<::dealii::DiagonalMatrix<VectorType>> &
    get_matrix_diagonal_inverse() const;

    /**
     * The entry (row, col): available on the diagonal only, after
     * compute_diagonal() (what PreconditionChebyshev asks for without a given
     * preconditioner); off-diagonal entries throw.
     */
    Number
    el(const size_type row, const size_type col) const;

    /** Memory of this object, its tpmg operator's work arrays not included. */
    std::size_t
    memory_consumption() const;

  private:
    internal::ObserverPointer<const Hierarchy<dim>>       hierarchy;
    unsigned int                                          level;
    tpmg_operator                                        *op;
    std::shared_ptr<::dealii::DiagonalMatrix<VectorType>> diagonal;
    std::shared_ptr<::dealii::DiagonalMatrix<VectorType>> inverse_diagonal;
    mutable VectorType                                    tmp;
    mutable std::unique_ptr<internal::Staging>            staging;
  };



  /**
   * Compare tpmg's operator of deal.II level @p level of @p hierarchy
   * (numbers::invalid_unsigned_int: the active DoFs) with the user's
   * operator @p user_operator of that level (anything with vmult() and
   * initialize_dof_vector() on LinearAlgebra::distributed::Vector<
   * OperatorType::value_type>, e.g. step-37's LaplaceOperator or deal.II's
   * MatrixFreeOperators::LaplaceOperator): both are applied to one random
   * vector that vanishes on Dirichlet DoFs, and the results are compared on
   * the interior rows (Dirichlet rows are treated in several ways). Throws
   * ExcHierarchyMismatch on every rank, naming the relative difference and
   * what tpmg applies, where it exceeds @p tolerance (default: 1e-10 in
   * double, 1e-4 in float).
   *
   * tpmg's smoother and coarse solver work with tpmg's operator, so call
   * this on the finest level to check that a coefficient and reaction were
   * passed (Hierarchy::set_coefficient(), the reaction of the Hierarchy's
   * constructor). On coarser levels with a coefficient tpmg rediscretizes
   * with cell means of a, which differs from an operator that evaluates a at
   * the level's quadrature points by O(h) relative: a difference there is
   * expected. Collective.
   */
  template <int dim, typename OperatorType>
  void
  check_level_operator(const Hierarchy<dim> &hierarchy,
                       const unsigned int    level,
                       const OperatorType   &user_operator,
                       double                tolerance = -1.)
  {
    using Number = typename OperatorType::value_type;
    using Vector = ::dealii::LinearAlgebra::distributed::Vector<Number>;
    if (tolerance < 0)
      tolerance = sizeof(Number) == sizeof(float) ? 1e-4 : 1e-10;
    LaplaceOperator<dim, Number> tpmg_operator(hierarchy, level);
    Vector                       x, y, x_user, y_user;
    tpmg_operator.initialize_dof_vector(x);
    tpmg_operator.initialize_dof_vector(y);
    user_operator.initialize_dof_vector(x_user);
    user_operator.initialize_dof_vector(y_user);
    const tpmg_level_layout layout = hierarchy.get_layout(level);
    const int               D      = hierarchy.get_grid_options().dim;
    AssertThrow(x_user.locally_owned_size() == x.locally_owned_size(),
                ExcHierarchyMismatch(
                  "check_level_operator: the user's operator has " +
                  std::to_string(x_user.locally_owned_size()) +
                  " locally owned entries, tpmg's " +
                  std::to_string(x.locally_owned_size())));
    const auto interior = [&](const std::size_t i) {
      const ::dealii::types::global_dof_index global =
        x.get_partitioner()->local_to_global(i);
      ::dealii::types::global_dof_index rest = global;
      for (int d = 0; d < D; ++d)
        {
          const ::dealii::types::global_dof_index p = rest % layout.n_global[d];
          rest /= layout.n_global[d];
          if (p == 0 || p + 1 == static_cast<::dealii::types::global_dof_index>(
                                   layout.n_global[d]))
            return false;
        }
      return true;
    };
    std::mt19937                           random(1234);
    std::uniform_real_distribution<double> uniform(-1.0, 1.0);
    for (std::size_t i = 0; i < x.locally_owned_size(); ++i)
      {
        const double value = interior(i) ? uniform(random) : 0.0;
        x.local_element(i) = x_user.local_element(i) = value;
      }
    tpmg_operator.vmult(y, x);
    user_operator.vmult(y_user, x_user);
    double difference = 0, norm = 0;
    for (std::size_t i = 0; i < y.locally_owned_size(); ++i)
      if (interior(i))
        {
          const double d = double(y.local_element(i)) - y_user.local_element(i);
          difference += d * d;
          norm += double(y_user.local_element(i)) * y_user.local_element(i);
        }
    const MPI_Comm comm = hierarchy.get_communicator();
    difference = std::sqrt(::dealii::Utilities::MPI::sum(difference, comm));
    norm       = std::sqrt(::dealii::Utilities::MPI::sum(norm, comm));
    const double relative = difference / std::max(norm, 1e-300);
    if (!(relative <= tolerance))
      {
        std::ostringstream message;
        message << "tpmg applies -∇·(a∇u)"
                << (hierarchy.get_grid_options().reaction != 0. ?
                      " + c u with c = " +
                        std::to_string(hierarchy.get_grid_options().reaction) :
                      std::string())
                << " with "
                << (hierarchy.has_coefficient() ?
                      "the coefficient a of Hierarchy::set_coefficient()" :
                      "a = 1 (no coefficient given)")
                << " on "
                << (level == ::dealii::numbers::invalid_unsigned_int ?
                      std::string("the active DoFs") :
                      "level " + std::to_string(level))
                << "; your level operator differs by " << relative
                << " (relative, on a random vector; tolerance " << tolerance
                << "): pass its coefficient with Hierarchy::set_coefficient() "
                   "and its reaction to the Hierarchy's constructor";
        AssertThrow(false, ExcHierarchyMismatch(message.str()));
      }
  }
} // namespace tpmg::dealii

#endif
