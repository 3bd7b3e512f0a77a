/* Shared helper of the deal.II bridge tests: deal.II's assembled Laplace
 * matrix, the independent reference for tpmg's operator. */
#ifndef TPMG_BRIDGE_ASSEMBLY_H
#define TPMG_BRIDGE_ASSEMBLY_H

#include <deal.II/base/quadrature_lib.h>

#include <deal.II/dofs/dof_handler.h>
#include <deal.II/dofs/dof_tools.h>

#include <deal.II/fe/fe_values.h>

#include <deal.II/lac/dynamic_sparsity_pattern.h>
#include <deal.II/lac/full_matrix.h>
#include <deal.II/lac/sparse_matrix.h>
#include <deal.II/lac/sparsity_pattern.h>

#include <deal.II/multigrid/mg_tools.h>

#include <vector>

namespace bridge_test
{
  /**
   * The Laplace matrix of @p level (active DoFs for invalid_unsigned_int)
   * assembled by deal.II, without constraints: every row, boundary rows too;
   * plus @p reaction times the mass matrix.
   */
  template <int dim>
  inline void
  assemble_laplace(const dealii::DoFHandler<dim> &dof_handler,
                   const unsigned int             level,
                   dealii::SparsityPattern       &sparsity,
                   dealii::SparseMatrix<double>  &matrix,
                   const double                   reaction = 0.)
  {
    const bool     active = level == dealii::numbers::invalid_unsigned_int;
    const auto    &fe     = dof_handler.get_fe();
    const unsigned n =
      active ? dof_handler.n_dofs() : dof_handler.n_dofs(level);
    dealii::DynamicSparsityPattern dsp(n, n);
    if (active)
      dealii::DoFTools::make_sparsity_pattern(dof_handler, dsp);
    else
      dealii::MGTools::make_sparsity_pattern(dof_handler, dsp, level);
    sparsity.copy_from(dsp);
    matrix.reinit(sparsity);

    dealii::FEValues<dim>      fe_values(fe,
                                    dealii::QGauss<dim>(fe.degree + 1),
                                    dealii::update_values |
                                      dealii::update_gradients |
                                      dealii::update_JxW_values);
    dealii::FullMatrix<double> cell_matrix(fe.n_dofs_per_cell(),
                                           fe.n_dofs_per_cell());
    std::vector<dealii::types::global_dof_index> indices(fe.n_dofs_per_cell());
    const auto add_cell = [&](const auto &cell) {
      fe_values.reinit(cell);
      cell_matrix = 0;
      for (unsigned int q = 0; q < fe_values.n_quadrature_points; ++q)
        for (unsigned int i = 0; i < fe.n_dofs_per_cell(); ++i)
          for (unsigned int j = 0; j < fe.n_dofs_per_cell(); ++j)
            cell_matrix(i, j) +=
              (fe_values.shape_grad(i, q) * fe_values.shape_grad(j, q) +
               reaction * fe_values.shape_value(i, q) *
                 fe_values.shape_value(j, q)) *
              fe_values.JxW(q);
      if (active)
        cell->get_dof_indices(indices);
      else
        cell->get_mg_dof_indices(indices);
      for (unsigned int i = 0; i < indices.size(); ++i)
        for (unsigned int j = 0; j < indices.size(); ++j)
          matrix.add(indices[i], indices[j], cell_matrix(i, j));
    };
    if (active)
      for (const auto &cell : dof_handler.active_cell_iterators())
        add_cell(cell);
    else
      for (const auto &cell : dof_handler.mg_cell_iterators_on_level(level))
        add_cell(cell);
  }



} // namespace bridge_test

#endif
