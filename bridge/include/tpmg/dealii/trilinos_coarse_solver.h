/* The deal.II bridge of tpmg: a coarse solver by Trilinos, as deal.II users
 * configure one. */
#ifndef tpmg_dealii_trilinos_coarse_solver_h
#define tpmg_dealii_trilinos_coarse_solver_h

#include <deal.II/dofs/dof_handler.h>

#include <deal.II/lac/la_parallel_vector.h>

#include <deal.II/multigrid/mg_base.h>
#include <deal.II/multigrid/mg_constrained_dofs.h>

#include <memory>

namespace tpmg::dealii
{
  /** How TrilinosCoarseSolver solves the assembled matrix. */
  enum class TrilinosCoarseMethod
  {
    /** CG with Trilinos ML's algebraic multigrid, to a relative tolerance */
    amg,
    /** Trilinos Amesos' KLU, a sparse LU factorization */
    direct
  };



  /**
   * The coarse solver deal.II programs (step-16, step-50) configure: the
   * Laplace matrix of one level assembled by deal.II into a
   * TrilinosWrappers::SparseMatrix, with the level's Dirichlet DoFs from
   * MGConstrainedDoFs eliminated (homogeneous constraints: an identity-like
   * row and column for each), solved by Trilinos, for deal.II's Multigrid:
   *
   * - Method::amg: deal.II's SolverCG preconditioned with one V-cycle of
   *   TrilinosWrappers::PreconditionAMG (Trilinos ML), to a relative residual
   *   ||b - A x|| <= relative_tolerance ||b|| from x = 0;
   * - Method::direct: TrilinosWrappers::SolverDirect (Amesos KLU), factorized
   *   once in initialize().
   *
   * For double vectors, Method::amg is what deal.II's
   * MGCoarseGridIterativeSolver with SolverCG, the matrix and
   * PreconditionAMG does, and Method::direct what
   * MGCoarseGridApplyPreconditioner with SolverDirect would; this class adds
   * the assembly with the level's Dirichlet DoFs and float levels. It computes
   * what tpmg's CoarseSolver computes, dst_I = A_II^{-1} src_I and dst_B = 0 on
   * the Dirichlet DoFs (src_B is ignored), exactly with Method::direct and to
   * the tolerance with Method::amg, so that the two can be swapped: tpmg's
   * fast diagonalization (a dense inverse up to TPMG_MAX_COARSE_DOFS interior
   * DoFs) against an assembled matrix and a sparse solver, the choice deal.II
   * users make for coarse meshes of many cells.
   *
   * With Method::amg the V-cycle is no fixed linear operator: CG stops at a
   * different point for each right-hand side. A Krylov method around it
   * should be flexible (SolverFGMRES) or the tolerance tight: deal.II's
   * right-preconditioned SolverGMRES builds its solution with one more
   * application and then misses its own tolerance (2D Q2, 30x24 coarse cells
   * refined once, coarse tolerance 1e-3: a true residual of 5.6e-9 where it
   * reported 1e-9). The default, 1e-6, kept it in every case measured
   * (doc/comparison.md).
   *
   * The matrix is -Laplace with unit coefficient plus AdditionalData::reaction
   * times the mass matrix (tpmg's operator without a coefficient: it does not
   * take Hierarchy::set_coefficient()'s, so with a variable coefficient use
   * CoarseSolver, or accept a coarse solve of another operator), assembled
   * cell by cell in deal.II's level numbering with Gauss quadrature of k+1
   * points, for any mesh and scalar element; a cell that is a translate of
   * the one before (FEValues' CellSimilarity) reuses its cell matrix. The
   * Trilinos objects work in double: vectors of float levels are copied to
   * double and back. The level vectors must have the locally owned DoFs of
   * the level as deal.II distributes them (DoFHandler::locally_owned_mg_dofs).
   *
   * Available where deal.II was configured with Trilinos
   * (DEAL_II_WITH_TRILINOS) and tpmg with TPMG_BRIDGE_TRILINOS not OFF:
   * is_available(). Elsewhere initialize() throws ExcUnsupported.
   */
  template <int dim, typename Number>
  class TrilinosCoarseSolver
    : public ::dealii::MGCoarseGridBase<
        ::dealii::LinearAlgebra::distributed::Vector<Number>>
  {
  public:
    using VectorType = ::dealii::LinearAlgebra::distributed::Vector<Number>;

    /** How the assembled matrix is solved. */
    using Method = TrilinosCoarseMethod;

    struct AdditionalData
    {
      AdditionalData(const Method       method             = Method::amg,
                     const double       relative_tolerance = 1e-6,
                     const unsigned int max_iterations     = 1000,
                     const double       reaction           = 0.)
        : method(method)
        , relative_tolerance(relative_tolerance)
        , max_iterations(max_iterations)
        , reaction(reaction)
      {}

      /** The solver. */
      Method method;

      /**
       * Method::amg: the relative residual CG reaches in each solve, in
       * (0, 1).
       */
      double relative_tolerance;

      /**
       * Method::amg: the CG iterations one solve may take; more throw
       * SolverControl::NoConvergence.
       */
      unsigned int max_iterations;

      /**
       * c >= 0 of -Δu + c u: the matrix adds c times the mass matrix, as the
       * Hierarchy's reaction does to tpmg's operators (pass the same value).
       */
      double reaction;
    };

    /** An empty solver; call initialize(). */
    TrilinosCoarseSolver();

    /** The solver of @p level: initialize(). */
    TrilinosCoarseSolver(const ::dealii::DoFHandler<dim>   &dof_handler,
                         const ::dealii::MGConstrainedDoFs &mg_constrained_dofs,
                         const unsigned int                 level,
                         const AdditionalData &data = AdditionalData());

    ~TrilinosCoarseSolver() override;

    /**
     * Assemble the Laplace matrix of @p level of @p dof_handler (its level
     * DoFs distributed) with the Dirichlet DoFs of @p mg_constrained_dofs on
     * that level eliminated, and set up the solver (AMG hierarchy or LU
     * factors). Nothing is kept of the two arguments: renumbering afterwards
     * needs a new initialize(). Throws ExcUnsupported where Trilinos is not
     * available or @p data is out of range.
     */
    void
    initialize(const ::dealii::DoFHandler<dim>   &dof_handler,
               const ::dealii::MGConstrainedDoFs &mg_constrained_dofs,
               const unsigned int                 level,
               const AdditionalData              &data = AdditionalData());

    /** Release the matrix and the solver. */
    void
    clear();

    /**
     * dst = A^{-1} src on @p level, the level of initialize(). Throws
     * ExcUnsupported for another level or vectors without the level's
     * locally owned DoFs, SolverControl::NoConvergence if CG does not reach
     * the tolerance.
     */
    void
    operator()(const unsigned int level,
               VectorType        &dst,
               const VectorType  &src) const override;

    /** The number of rows of the matrix (the level's DoFs), 0 if empty. */
    ::dealii::types::global_dof_index
    m() const;

    /** Nonzero entries of the assembled matrix, 0 if empty. */
    std::size_t
    n_nonzero_elements() const;

    /** CG iterations of the last solve (Method::amg; 0 for direct). */
    unsigned int
    last_n_iterations() const;

    /** Whether this build has Trilinos (see the class description). */
    static bool
    is_available();

  private:
    struct Data;
    std::unique_ptr<Data> data;
  };
} // namespace tpmg::dealii

#endif
