/* The deal.II bridge of tpmg: whole V-cycles and whole solves in a tpmg
 * backend. */
#include <tpmg/dealii/gpu_preconditioner.h>

#include "staging.h"

using namespace ::dealii;

namespace tpmg::dealii
{
  namespace
  {
    /**
     * The finest-level grid of @p hierarchy in @p context: the hierarchy's own
     * where it lives in that context, else a new one (returned in @p own, to
     * be destroyed by the caller) with the same description and coefficient.
     */
    template <int dim>
    tpmg_grid *
    grid_in_context(const Hierarchy<dim> &hierarchy,
                    Context              &context,
                    tpmg_grid           **own)
    {
      *own = nullptr;
      AssertThrow(context.n_ranks() == hierarchy.get_context().n_ranks(),
                  ExcUnsupported(
                    "a Context of " + std::to_string(context.n_ranks()) +
                    " ranks for a Hierarchy on " +
                    std::to_string(hierarchy.get_context().n_ranks()) +
                    ": create it with the triangulation's communicator"));
      if (hierarchy.get_context().get() == context.get())
        return hierarchy.get_grid();
      *own = hierarchy.create_grid_copy(context);
      return *own;
    }



    /**
     * The layout of the finest level of @p grid for deal.II's active DoFs:
     * tpmg's partition of it must be the Hierarchy's, whose redistribution
     * moves the values.
     */
    template <int dim>
    internal::VectorLayout
    fine_layout(const Hierarchy<dim>    &hierarchy,
                const tpmg_level_layout &layout)
    {
      const tpmg_level_layout own = hierarchy.get_layout();
      AssertThrow(own.distributed == layout.distributed &&
                    own.owned_first == layout.owned_first &&
                    own.owned_end == layout.owned_end,
                  ExcUnsupported(
                    "a Context that partitions the finest level unlike the "
                    "Hierarchy's (tpmg_context_options::whole_level_dofs): "
                    "create both with the same options"));
      return internal::VectorLayout(layout, hierarchy.get_redistribution());
    }
  } // namespace



  template <int dim>
  GpuPreconditioner<dim>::GpuPreconditioner(
    const Hierarchy<dim>         &hierarchy,
    Context                      &context,
    const tpmg_multigrid_options &options)
    : context(&context)
    , own_grid(nullptr)
    , multigrid(nullptr)
  {
    // host vectors are always copied into the context's memory, on the CPU
    // backend too, so that CI runs the code a GPU runs
    staging = std::make_unique<internal::Staging>(context.get(), true);
    tpmg_grid  *grid = grid_in_context(hierarchy, context, &own_grid);
    tpmg_status status =
      tpmg_grid_level_layout(grid,
                             hierarchy.get_grid_options().fine_level,
                             &layout);
    if (status == TPMG_SUCCESS)
      status = tpmg_multigrid_create(grid, &options, &multigrid);
    if (status == TPMG_SUCCESS)
      {
        try
          {
            fine_layout(hierarchy, layout);
          }
        catch (...)
          {
            tpmg_multigrid_destroy(&multigrid);
            tpmg_grid_destroy(&own_grid);
            throw;
          }
        redistribution = hierarchy.get_redistribution();
      }
    if (status != TPMG_SUCCESS)
      {
        const std::string message = tpmg_context_last_error(context.get());
        tpmg_grid_destroy(&own_grid);
        AssertThrow(false,
                    ExcTpmgError("tpmg_multigrid_create", status, message));
      }
  }



  template <int dim>
  GpuPreconditioner<dim>::GpuPreconditioner(const Hierarchy<dim> &hierarchy,
                                            Context              &context)
    : GpuPreconditioner(hierarchy,
                        context,
                        default_multigrid_options(hierarchy))
  {}



  template <int dim>
  GpuPreconditioner<dim>::~GpuPreconditioner()
  {
    staging.reset();
    tpmg_multigrid_destroy(&multigrid);
    tpmg_grid_destroy(&own_grid);
  }



  template <int dim>
  template <typename MemorySpace>
  void
  GpuPreconditioner<dim>::vmult(
    LinearAlgebra::distributed::Vector<double, MemorySpace>       &dst,
    const LinearAlgebra::distributed::Vector<double, MemorySpace> &src) const
  {
    const internal::VectorLayout fine(layout, redistribution);
    const void                  *r = staging->input(0, src, fine);
    void                        *z = staging->output(1, dst, fine, false);
    context->check(tpmg_multigrid_precondition(multigrid, TPMG_DOUBLE, r, z),
                   "tpmg_multigrid_precondition");
    staging->finish_output(1, dst, fine);
  }



  template <int dim>
  Context &
  GpuPreconditioner<dim>::get_context() const
  {
    return *context;
  }



  template <int dim, typename MemorySpace>
  tpmg_solver_result
  solve_on_gpu(
    const Hierarchy<dim>                                          &hierarchy,
    Context                                                       &context,
    const LinearAlgebra::distributed::Vector<double, MemorySpace> &rhs,
    LinearAlgebra::distributed::Vector<double, MemorySpace>       &solution,
    const tpmg_solver_options                                     &options)
  {
    tpmg_context *ctx = context.get();
    // everything the solve allocates, released on every way out
    struct Resources
    {
      tpmg_context *ctx;
      tpmg_grid    *own_grid = nullptr;
      tpmg_solver  *solver   = nullptr;
      void         *b_float  = nullptr;
      void         *x_float  = nullptr;
      ~Resources()
      {
        tpmg_solver_destroy(&solver);
        tpmg_vector_destroy(ctx, &x_float);
        tpmg_vector_destroy(ctx, &b_float);
        tpmg_grid_destroy(&own_grid);
      }
    } resources{ctx};

    tpmg_grid *grid = grid_in_context(hierarchy, context, &resources.own_grid);
    tpmg_level_layout tpmg_fine;
    context.check(
      tpmg_grid_level_layout(grid,
                             hierarchy.get_grid_options().fine_level,
                             &tpmg_fine),
      "tpmg_grid_level_layout");
    const internal::VectorLayout fine = fine_layout(hierarchy, tpmg_fine);
    const tpmg_index             n    = fine.n_box;
    if (solution.size() != rhs.size() ||
        solution.locally_owned_size() != rhs.locally_owned_size())
      solution.reinit(rhs, true);

    // the right-hand side in, once; x = 0 (the solver sets x_B = b_B)
    internal::Staging staging(ctx, true);
    const void       *b = staging.input(0, rhs, fine);
    void             *x = staging.output(1, solution, fine, false);
    context.check(tpmg_vector_set(ctx, TPMG_DOUBLE, n, 0.0, x),
                  "tpmg_vector_set");
    const bool in_float = options.arithmetic == TPMG_ARITHMETIC_FLOAT;
    if (in_float)
      {
        context.check(
          tpmg_vector_create(ctx, TPMG_FLOAT, n, &resources.b_float),
          "tpmg_vector_create");
        context.check(
          tpmg_vector_create(ctx, TPMG_FLOAT, n, &resources.x_float),
          "tpmg_vector_create");
        context.check(tpmg_vector_convert(
                        ctx, n, TPMG_DOUBLE, b, TPMG_FLOAT, resources.b_float),
                      "tpmg_vector_convert");
      }

    // after the vectors: GMRES sizes its basis to the memory left
    context.check(tpmg_solver_create(grid, &options, &resources.solver),
                  "tpmg_solver_create");
    tpmg_solver_result result{};
    context.check(tpmg_solver_solve(resources.solver,
                                    in_float ? resources.b_float : b,
                                    in_float ? resources.x_float : x,
                                    &result),
                  "tpmg_solver_solve");
    if (in_float)
      context.check(tpmg_vector_convert(
                      ctx, n, TPMG_FLOAT, resources.x_float, TPMG_DOUBLE, x),
                    "tpmg_vector_convert");

    // the solution out, once
    staging.finish_output(1, solution, fine);
    return result;
  }



  template <int dim>
  tpmg_multigrid_options
  default_multigrid_options(const Hierarchy<dim> &hierarchy)
  {
    tpmg_multigrid_options options = tpmg_multigrid_options_default();
    if (hierarchy.has_coefficient())
      options.smoother = TPMG_SMOOTHER_GLOBAL;
    return options;
  }



  template <int dim>
  tpmg_solver_options
  default_solver_options(const Hierarchy<dim> &hierarchy)
  {
    tpmg_solver_options options = tpmg_solver_options_default();
    if (hierarchy.has_coefficient())
      options.smoother = TPMG_SMOOTHER_GLOBAL;
    return options;
  }



  template <int dim, typename MemorySpace>
  tpmg_solver_result
  solve_on_gpu(
    const Hierarchy<dim>                                          &hierarchy,
    Context                                                       &context,
    const LinearAlgebra::distributed::Vector<double, MemorySpace> &rhs,
    LinearAlgebra::distributed::Vector<double, MemorySpace>       &solution)
  {
    return solve_on_gpu(
      hierarchy, context, rhs, solution, default_solver_options(hierarchy));
  }



  template class GpuPreconditioner<2>;
  template class GpuPreconditioner<3>;
  template tpmg_multigrid_options
  default_multigrid_options(const Hierarchy<2> &);
  template tpmg_multigrid_options
  default_multigrid_options(const Hierarchy<3> &);
  template tpmg_solver_options
  default_solver_options(const Hierarchy<2> &);
  template tpmg_solver_options
  default_solver_options(const Hierarchy<3> &);

#define TPMG_DEALII_INSTANTIATE(dim, MemorySpace)                           \
  template void GpuPreconditioner<dim>::vmult<MemorySpace>(                 \
    LinearAlgebra::distributed::Vector<double, MemorySpace> &,              \
    const LinearAlgebra::distributed::Vector<double, MemorySpace> &) const; \
  template tpmg_solver_result solve_on_gpu<dim, MemorySpace>(               \
    const Hierarchy<dim> &,                                                 \
    Context &,                                                              \
    const LinearAlgebra::distributed::Vector<double, MemorySpace> &,        \
    LinearAlgebra::distributed::Vector<double, MemorySpace> &,              \
    const tpmg_solver_options &);                                           \
  template tpmg_solver_result solve_on_gpu<dim, MemorySpace>(               \
    const Hierarchy<dim> &,                                                 \
    Context &,                                                              \
    const LinearAlgebra::distributed::Vector<double, MemorySpace> &,        \
    LinearAlgebra::distributed::Vector<double, MemorySpace> &);

  TPMG_DEALII_INSTANTIATE(2, ::dealii::MemorySpace::Host)
  TPMG_DEALII_INSTANTIATE(3, ::dealii::MemorySpace::Host)
#if DEAL_II_VERSION_GTE(9, 5, 0)
  TPMG_DEALII_INSTANTIATE(2, ::dealii::MemorySpace::Default)
  TPMG_DEALII_INSTANTIATE(3, ::dealii::MemorySpace::Default)
#endif
#undef TPMG_DEALII_INSTANTIATE
} // namespace tpmg::dealii
