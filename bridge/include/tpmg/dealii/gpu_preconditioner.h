/* The deal.II bridge of tpmg: whole V-cycles and whole solves in a tpmg
 * backend. */
#ifndef tpmg_dealii_gpu_preconditioner_h
#define tpmg_dealii_gpu_preconditioner_h

#include <deal.II/base/memory_space.h>

#include <deal.II/lac/la_parallel_vector.h>

#include <tpmg.h>
#include <tpmg/dealii/context.h>
#include <tpmg/dealii/hierarchy.h>

#include <memory>

namespace tpmg::dealii
{
  namespace internal
  {
    class Staging;
  }

  /**
   * A preconditioner for deal.II's solvers that runs one whole tpmg V-cycle,
   * z = V(0, r), in a Context's backend: on the GPU for a CUDA context, for
   * users whose deal.II has no GPU support, and on the CPU otherwise, through
   * the same code.
   *
   * The V-cycle's grid and vectors live in the context (a grid of its own,
   * described like the Hierarchy's, unless the Hierarchy already lives in
   * that context). A vmult() moves only src in and dst out: host vectors are
   * copied into and out of the context's memory (tpmg_vector_upload and
   * download, which on the CPU backend are plain copies), device vectors of
   * a CUDA context are used in place.
   *
   * With tpmg_multigrid_options::precision = TPMG_FLOAT the V-cycle runs in
   * float on double vectors (the paper's mixed precision); use a flexible
   * Krylov method (SolverFGMRES, SolverFlexibleCG) then. The default options
   * give the symmetric V-cycle, for CG; for GMRES set
   * tpmg_multigrid_options::symmetric = 0, which contracts faster (what
   * tpmg's own GMRES uses). The result is zero on Dirichlet DoFs, as tpmg's
   * V-cycle. The coefficient of the Hierarchy (Hierarchy::set_coefficient())
   * is the V-cycle's, also on a grid of its own.
   */
  template <int dim>
  class GpuPreconditioner : public internal::EnableObserverPointer
  {
  public:
    /**
     * A V-cycle on the levels of @p hierarchy in @p context's backend, with
     * @p options (precision, smoother variant, symmetric).
     */
    GpuPreconditioner(const Hierarchy<dim>         &hierarchy,
                      Context                      &context,
                      const tpmg_multigrid_options &options);

    /**
     * A V-cycle with default_multigrid_options(@p hierarchy): tpmg's
     * defaults, the smoother TPMG_SMOOTHER_GLOBAL where the hierarchy has a
     * coefficient (the only variant tpmg takes there).
     */
    GpuPreconditioner(const Hierarchy<dim> &hierarchy, Context &context);

    ~GpuPreconditioner() override;

    GpuPreconditioner(const GpuPreconditioner &) = delete;
    GpuPreconditioner &
    operator=(const GpuPreconditioner &) = delete;

    /**
     * dst = V(0, src), one V-cycle on the finest level. Vectors hold all
     * active DoFs in lexicographic numbering; MemorySpace is Host (and, with
     * deal.II >= 9.5, Default).
     */
    template <typename MemorySpace>
    void
    vmult(
      ::dealii::LinearAlgebra::distributed::Vector<double, MemorySpace> &dst,
      const ::dealii::LinearAlgebra::distributed::Vector<double, MemorySpace>
        &src) const;

    /** The context the V-cycle runs in. */
    Context &
    get_context() const;

  private:
    internal::ObserverPointer<Context>         context;
    tpmg_grid                                 *own_grid;
    tpmg_multigrid                            *multigrid;
    tpmg_level_layout                          layout;
    std::shared_ptr<const internal::Redistribution> redistribution;
    mutable std::unique_ptr<internal::Staging> staging;
  };



  /**
   * Solve A x = b on the finest level entirely in @p context's backend with
   * tpmg's solver (GMRES or CG preconditioned by the V-cycle, FMG or
   * V-cycles, as @p options says): @p rhs is moved in once, @p solution
   * out once, and every iteration runs in the backend. @p rhs holds all
   * active DoFs in lexicographic numbering, Dirichlet entries holding g (as
   * tpmg_problem_rhs); the solve starts from x = 0 with x_B = b_B.
   * @p solution is resized to the layout of @p rhs. With TPMG_ARITHMETIC_FLOAT
   * the vectors are converted to float in the backend.
   *
   * Returns what the solve did; not converging is not an error (see
   * tpmg_solver_result::converged).
   */
  template <int dim, typename MemorySpace = ::dealii::MemorySpace::Host>
  tpmg_solver_result
  solve_on_gpu(
    const Hierarchy<dim> &hierarchy,
    Context              &context,
    const ::dealii::LinearAlgebra::distributed::Vector<double, MemorySpace>
                                                                      &rhs,
    ::dealii::LinearAlgebra::distributed::Vector<double, MemorySpace> &solution,
    const tpmg_solver_options                                         &options);

  /**
   * solve_on_gpu() with default_solver_options(@p hierarchy): tpmg's
   * defaults, the smoother TPMG_SMOOTHER_GLOBAL where the hierarchy has a
   * coefficient.
   */
  template <int dim, typename MemorySpace = ::dealii::MemorySpace::Host>
  tpmg_solver_result
  solve_on_gpu(
    const Hierarchy<dim> &hierarchy,
    Context              &context,
    const ::dealii::LinearAlgebra::distributed::Vector<double, MemorySpace>
      &rhs,
    ::dealii::LinearAlgebra::distributed::Vector<double, MemorySpace>
      &solution);

  /**
   * tpmg_multigrid_options_default() with the smoother TPMG_SMOOTHER_GLOBAL
   * where @p hierarchy has a coefficient (tpmg refuses the other variants
   * there): start from these to change an option.
   */
  template <int dim>
  tpmg_multigrid_options
  default_multigrid_options(const Hierarchy<dim> &hierarchy);

  /**
   * tpmg_solver_options_default() with the smoother TPMG_SMOOTHER_GLOBAL
   * where @p hierarchy has a coefficient.
   */
  template <int dim>
  tpmg_solver_options
  default_solver_options(const Hierarchy<dim> &hierarchy);
} // namespace tpmg::dealii

#endif
