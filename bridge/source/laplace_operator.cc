/* The deal.II bridge of tpmg: the matrix-free level operator. */
#include <tpmg/dealii/laplace_operator.h>

#include "staging.h"

#include <string>
#include <type_traits>
#include <vector>

using namespace ::dealii;

namespace tpmg::dealii
{
  template <int dim, typename Number, typename MemorySpace>
  LaplaceOperator<dim, Number, MemorySpace>::LaplaceOperator()
    : level(numbers::invalid_unsigned_int)
    , op(nullptr)
  {}



  template <int dim, typename Number, typename MemorySpace>
  LaplaceOperator<dim, Number, MemorySpace>::LaplaceOperator(
    const Hierarchy<dim> &hierarchy,
    const unsigned int    level)
    : LaplaceOperator()
  {
    initialize(hierarchy, level);
  }



  template <int dim, typename Number, typename MemorySpace>
  LaplaceOperator<dim, Number, MemorySpace>::~LaplaceOperator()
  {
    clear();
  }



  template <int dim, typename Number, typename MemorySpace>
  void
  LaplaceOperator<dim, Number, MemorySpace>::initialize(
    const Hierarchy<dim> &hierarchy,
    const unsigned int    level)
  {
    clear();
    const int tpmg_level = hierarchy.tpmg_level(level);
    if (level != numbers::invalid_unsigned_int)
      hierarchy.get_partitioner(level); // throws without level DoFs
    Context &context = hierarchy.get_context();
    context.check(tpmg_operator_create(hierarchy.get_grid(),
                                       tpmg_level,
                                       internal::precision_of<Number>(),
                                       &op),
                  "tpmg_operator_create");
    this->hierarchy = &hierarchy;
    this->level     = level;
    staging         = std::make_unique<internal::Staging>(context.get());
  }



  template <int dim, typename Number, typename MemorySpace>
  void
  LaplaceOperator<dim, Number, MemorySpace>::clear()
  {
    tpmg_operator_destroy(&op);
    staging.reset();
    diagonal.reset();
    inverse_diagonal.reset();
    tmp.reinit(0);
    hierarchy = nullptr;
    level     = numbers::invalid_unsigned_int;
  }



  template <int dim, typename Number, typename MemorySpace>
  unsigned int
  LaplaceOperator<dim, Number, MemorySpace>::get_level() const
  {
    return level;
  }



  template <int dim, typename Number, typename MemorySpace>
  typename LaplaceOperator<dim, Number, MemorySpace>::size_type
  LaplaceOperator<dim, Number, MemorySpace>::m() const
  {
    AssertThrow(op != nullptr, ExcNotInitialized());
    return hierarchy->n_dofs(level);
  }



  template <int dim, typename Number, typename MemorySpace>
  typename LaplaceOperator<dim, Number, MemorySpace>::size_type
  LaplaceOperator<dim, Number, MemorySpace>::n() const
  {
    return m();
  }



  template <int dim, typename Number, typename MemorySpace>
  void
  LaplaceOperator<dim, Number, MemorySpace>::vmult(VectorType       &dst,
                                                   const VectorType &src) const
  {
    AssertThrow(op != nullptr, ExcNotInitialized());
    const internal::VectorLayout &layout =
      staging->layout_of(*hierarchy, level);
    const void                  *in  = staging->input(0, src, layout);
    void                        *out = staging->output(1, dst, layout, false);
    hierarchy->get_context().check(tpmg_operator_apply(op, in, out),
                                   "tpmg_operator_apply");
    staging->finish_output(1, dst, layout);
  }



  template <int dim, typename Number, typename MemorySpace>
  void
  LaplaceOperator<dim, Number, MemorySpace>::Tvmult(VectorType       &dst,
                                                    const VectorType &src) const
  {
    vmult(dst, src);
  }



  template <int dim, typename Number, typename MemorySpace>
  void
  LaplaceOperator<dim, Number, MemorySpace>::vmult_add(
    VectorType       &dst,
    const VectorType &src) const
  {
    if (tmp.size() != dst.size() ||
        tmp.locally_owned_size() != dst.locally_owned_size())
      tmp.reinit(dst, true);
    vmult(tmp, src);
    dst += tmp;
  }



  template <int dim, typename Number, typename MemorySpace>
  void
  LaplaceOperator<dim, Number, MemorySpace>::Tvmult_add(
    VectorType       &dst,
    const VectorType &src) const
  {
    vmult_add(dst, src);
  }



  template <int dim, typename Number, typename MemorySpace>
  void
  LaplaceOperator<dim, Number, MemorySpace>::vmult_interface_down(
    VectorType &dst,
    const VectorType &) const
  {
    // a globally refined mesh has no refinement edge: no coupling
    dst = Number(0);
  }



  template <int dim, typename Number, typename MemorySpace>
  void
  LaplaceOperator<dim, Number, MemorySpace>::vmult_interface_up(
    VectorType &dst,
    const VectorType &) const
  {
    dst = Number(0);
  }



  template <int dim, typename Number, typename MemorySpace>
  void
  LaplaceOperator<dim, Number, MemorySpace>::initialize_dof_vector(
    VectorType &vector) const
  {
    AssertThrow(hierarchy != nullptr, ExcNotInitialized());
    vector.reinit(hierarchy->get_partitioner(level));
  }



  template <int dim, typename Number, typename MemorySpace>
  void
  LaplaceOperator<dim, Number, MemorySpace>::compute_diagonal()
  {
    AssertThrow(op != nullptr, ExcNotInitialized());
    Context                     &context = hierarchy->get_context();
    const internal::VectorLayout &layout =
      staging->layout_of(*hierarchy, level);
    const tpmg_index             n         = layout.n_owned;
    const auto                   precision = internal::precision_of<Number>();

    // the core writes the diagonal where the context can reach the vector;
    // its inverse is formed on the host and copied back the same way, which
    // works for host and device vectors alike
    diagonal = std::make_shared<DiagonalMatrix<VectorType>>();
    initialize_dof_vector(diagonal->get_vector());
    void *values = staging->output(1, diagonal->get_vector(), layout, false);
    context.check(tpmg_operator_diagonal(op, values), "tpmg_operator_diagonal");
    std::vector<Number> host(n);
    context.check(tpmg_vector_download(
                    context.get(),
                    precision,
                    n,
                    internal::Staging::owned_part(values, precision, layout),
                    host.data()),
                  "tpmg_vector_download");
    staging->finish_output(1, diagonal->get_vector(), layout);

    for (Number &value : host)
      value = Number(1) / value;
    inverse_diagonal = std::make_shared<DiagonalMatrix<VectorType>>();
    initialize_dof_vector(inverse_diagonal->get_vector());
    values = staging->output(1, inverse_diagonal->get_vector(), layout, false);
    context.check(tpmg_vector_upload(
                    context.get(),
                    precision,
                    n,
                    host.data(),
                    internal::Staging::owned_part(values, precision, layout)),
                  "tpmg_vector_upload");
    staging->finish_output(1, inverse_diagonal->get_vector(), layout);
  }



  template <int dim, typename Number, typename MemorySpace>
  const std::shared_ptr<DiagonalMatrix<
    typename LaplaceOperator<dim, Number, MemorySpace>::VectorType>> &
  LaplaceOperator<dim, Number, MemorySpace>::get_matrix_diagonal() const
  {
    AssertThrow(diagonal != nullptr,
                ExcMessage("call compute_diagonal() first"));
    return diagonal;
  }



  template <int dim, typename Number, typename MemorySpace>
  const std::shared_ptr<DiagonalMatrix<
    typename LaplaceOperator<dim, Number, MemorySpace>::VectorType>> &
  LaplaceOperator<dim, Number, MemorySpace>::get_matrix_diagonal_inverse() const
  {
    AssertThrow(inverse_diagonal != nullptr,
                ExcMessage("call compute_diagonal() first"));
    return inverse_diagonal;
  }



  template <int dim, typename Number, typename MemorySpace>
  Number
  LaplaceOperator<dim, Number, MemorySpace>::el(const size_type row,
                                                const size_type col) const
  {
    AssertThrow(row == col,
                ExcUnsupported(
                  "the off-diagonal entry (" + std::to_string(row) + ", " +
                  std::to_string(col) + ") of a matrix-free operator"));
    AssertThrow(diagonal != nullptr,
                ExcMessage("call compute_diagonal() before el()"));
    if constexpr (std::is_same_v<MemorySpace, ::dealii::MemorySpace::Host>)
      return diagonal->get_vector()(row);
    else
      {
        AssertThrow(false,
                    ExcUnsupported("el() on a vector outside host memory: use "
                                   "get_matrix_diagonal()"));
        return Number();
      }
  }



  template <int dim, typename Number, typename MemorySpace>
  std::size_t
  LaplaceOperator<dim, Number, MemorySpace>::memory_consumption() const
  {
    std::size_t bytes = sizeof(*this) + tmp.memory_consumption();
    if (diagonal)
      bytes += diagonal->memory_consumption();
    if (inverse_diagonal)
      bytes += inverse_diagonal->memory_consumption();
    return bytes;
  }



  template class LaplaceOperator<2, double>;
  template class LaplaceOperator<2, float>;
  template class LaplaceOperator<3, double>;
  template class LaplaceOperator<3, float>;
#if DEAL_II_VERSION_GTE(9, 5, 0)
  template class LaplaceOperator<2, double, ::dealii::MemorySpace::Default>;
  template class LaplaceOperator<2, float, ::dealii::MemorySpace::Default>;
  template class LaplaceOperator<3, double, ::dealii::MemorySpace::Default>;
  template class LaplaceOperator<3, float, ::dealii::MemorySpace::Default>;
#endif
} // namespace tpmg::dealii
