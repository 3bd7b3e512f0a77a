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

#include <cstddef>
#include <memory>

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
   * matrix, plus c times the mass matrix where the Hierarchy has a reaction c;
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
} // namespace tpmg::dealii

#endif
