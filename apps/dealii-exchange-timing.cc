/* What the deal.II bridge's exchange between p4est's partition and tpmg's
 * slabs costs: LaplaceOperator::vmult on deal.II vectors against the same
 * operator applied by the core to tpmg's own vectors (tpmg_operator_apply),
 * whose difference is the bridge's copies and exchange.
 *
 *   mpirun -np P dealii-exchange-timing dim k refinements n_0,n_1[,n_2] [calls]
 *
 * on GridGenerator::subdivided_hyper_rectangle with n_d coarse cells per
 * direction, refined globally, p4est's partition. With n_0 = n_1 = 2 and
 * n_2 = 4P (or 8 on P = 2 and 4) p4est's partition is tpmg's slabs (no
 * values move); with n_2 the smallest, it is not. Prints one line per rank
 * 0: DoFs, whether values move, seconds per call (the slowest rank's). */
#include <deal.II/base/mpi.h>

#include <deal.II/distributed/tria.h>

#include <deal.II/dofs/dof_handler.h>

#include <deal.II/fe/fe_q.h>

#include <deal.II/grid/grid_generator.h>

#include <deal.II/lac/la_parallel_vector.h>

#include <tpmg/dealii/context.h>
#include <tpmg/dealii/hierarchy.h>
#include <tpmg/dealii/laplace_operator.h>
#include <tpmg/dealii/renumbering.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

using namespace dealii;

namespace
{
  /** Seconds per call of @p call, @p n calls, the slowest rank's. */
  template <typename Call>
  double
  seconds_per_call(const unsigned int n, const Call &call)
  {
    call();
    MPI_Barrier(MPI_COMM_WORLD);
    const double start = MPI_Wtime();
    for (unsigned int i = 0; i < n; ++i)
      call();
    const double seconds = (MPI_Wtime() - start) / n;
    return Utilities::MPI::max(seconds, MPI_COMM_WORLD);
  }

  template <int dim>
  void
  run(const unsigned int               k,
      const unsigned int               refinements,
      const std::vector<unsigned int> &cells,
      const unsigned int               n_calls)
  {
    parallel::distributed::Triangulation<dim> tria(MPI_COMM_WORLD);
    Point<dim>                                upper;
    for (unsigned int d = 0; d < dim; ++d)
      upper[d] = cells[d];
    GridGenerator::subdivided_hyper_rectangle(tria, cells, Point<dim>(), upper);
    tria.refine_global(refinements);
    const FE_Q<dim> fe(k);
    DoFHandler<dim> dof_handler(tria);
    dof_handler.distribute_dofs(fe);
    tpmg::dealii::renumber_lexicographic(dof_handler);
    tpmg::dealii::Context        context(MPI_COMM_WORLD, "cpu", 1);
    tpmg::dealii::Hierarchy<dim> hierarchy(dof_handler, context);

    // whether deal.II's owned DoFs are tpmg's (then no values move)
    const tpmg_level_layout layout = hierarchy.get_layout();
    const IndexSet         &owned  = dof_handler.locally_owned_dofs();
    const bool              same =
      Utilities::MPI::min(
        (owned.n_elements() ==
           static_cast<types::global_dof_index>(
             (layout.owned_end - layout.owned_first) * layout.plane) &&
         (owned.n_elements() == 0 ||
          *owned.begin() == static_cast<types::global_dof_index>(
                              layout.owned_first * layout.plane))) ?
          1u :
          0u,
        MPI_COMM_WORLD) == 1;

    const tpmg::dealii::LaplaceOperator<dim, double> op(hierarchy);
    LinearAlgebra::distributed::Vector<double>       src, dst;
    op.initialize_dof_vector(src);
    op.initialize_dof_vector(dst);
    for (unsigned int i = 0; i < src.locally_owned_size(); ++i)
      src.local_element(i) = std::sin(0.37 * i);
    const double bridge =
      seconds_per_call(n_calls, [&]() { op.vmult(dst, src); });

    // the core alone on tpmg's vectors of the same level
    tpmg_operator   *core = nullptr;
    void            *in = nullptr, *out = nullptr;
    const int        fine  = hierarchy.get_grid_options().fine_level;
    const tpmg_index n_box = layout.count * layout.plane;
    context.check(
      tpmg_operator_create(hierarchy.get_grid(), fine, TPMG_DOUBLE, &core),
      "tpmg_operator_create");
    context.check(tpmg_vector_create(context.get(), TPMG_DOUBLE, n_box, &in),
                  "tpmg_vector_create");
    context.check(tpmg_vector_create(context.get(), TPMG_DOUBLE, n_box, &out),
                  "tpmg_vector_create");
    context.check(tpmg_vector_set(context.get(), TPMG_DOUBLE, n_box, 1.0, in),
                  "tpmg_vector_set");
    const double alone = seconds_per_call(n_calls, [&]() {
      context.check(tpmg_operator_apply(core, in, out), "tpmg_operator_apply");
    });
    tpmg_vector_destroy(context.get(), &out);
    tpmg_vector_destroy(context.get(), &in);
    tpmg_operator_destroy(&core);

    std::string mesh;
    for (unsigned int d = 0; d < dim; ++d)
      mesh += (d ? "," : "") + std::to_string(cells[d]);
    if (Utilities::MPI::this_mpi_process(MPI_COMM_WORLD) == 0)
      std::printf("%dD Q%u cells %s refined %u on %u ranks: %llu DoFs, "
                  "partition %s; vmult %.3e s, core %.3e s, exchange and "
                  "copies %.3e s (%.0f%% of the core)\n",
                  dim,
                  k,
                  mesh.c_str(),
                  refinements,
                  Utilities::MPI::n_mpi_processes(MPI_COMM_WORLD),
                  static_cast<unsigned long long>(dof_handler.n_dofs()),
                  same ? "tpmg's slabs (no values move)" :
                         "p4est's (values move)",
                  bridge,
                  alone,
                  bridge - alone,
                  100 * (bridge - alone) / alone);
  }
} // namespace

int
main(int argc, char **argv)
{
  Utilities::MPI::MPI_InitFinalize mpi(argc, argv, 1);
  if (argc < 5)
    {
      std::cerr << "usage: " << argv[0]
                << " dim k refinements n_0,n_1[,n_2] [calls]" << std::endl;
      return 2;
    }
  const int                 dim         = std::atoi(argv[1]);
  const unsigned int        k           = std::atoi(argv[2]);
  const unsigned int        refinements = std::atoi(argv[3]);
  const unsigned int        n_calls     = argc > 5 ? std::atoi(argv[5]) : 20;
  std::vector<unsigned int> cells;
  std::stringstream         list(argv[4]);
  for (std::string item; std::getline(list, item, ',');)
    cells.push_back(std::atoi(item.c_str()));
  try
    {
      if (dim == 2 && cells.size() == 2)
        run<2>(k, refinements, cells, n_calls);
      else if (dim == 3 && cells.size() == 3)
        run<3>(k, refinements, cells, n_calls);
      else
        {
          std::cerr << "dim must be 2 or 3, with as many cell counts"
                    << std::endl;
          return 2;
        }
    }
  catch (const std::exception &e)
    {
      std::cerr << "exception: " << e.what() << std::endl;
      return 1;
    }
  return 0;
}
