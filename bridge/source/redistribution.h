/* The deal.II bridge of tpmg, internal: moving a level's values between
 * deal.II's partition and tpmg's. Not installed. */
#ifndef tpmg_dealii_redistribution_h
#define tpmg_dealii_redistribution_h

#include <deal.II/base/mpi.h>
#include <deal.II/base/types.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace tpmg::dealii::internal
{
  /**
   * Who owns which DoFs of one level in deal.II and in tpmg, and the moves
   * between the two: the bridge's one description of the exchange, set up
   * once per level (as deal.II's Utilities::MPI::Partitioner or PETSc's
   * PetscSF describe theirs) and used by every class through Staging.
   *
   * Both sides number the level's DoFs by their lexicographic index g (x
   * fastest, tpmg's numbering). In deal.II each rank owns the DoFs of its
   * own cells, as p4est partitions them; renumber_lexicographic() numbers
   * them contiguously in increasing g, so a rank's owned entries are its
   * DoFs sorted by g. tpmg owns the contiguous range [tpmg_first, tpmg_end)
   * of g on a level it distributes (its slabs), and every g on a level it
   * keeps whole on every rank.
   *
   * Distributed level: rank r sends rank s the entries whose g lies in s's
   * range, a contiguous piece of r's owned entries (they are sorted by g);
   * rank s puts them at g - tpmg_first. One round of point-to-point messages
   * each way per call (MPI_Isend/MPI_Irecv on a duplicate of the
   * communicator), only between ranks that share DoFs; a rank's own piece is
   * copied. Whole level: MPI_Allgatherv of the owned entries, placed at their
   * g on every rank; back, each rank picks its entries locally.
   *
   * Where every rank's owned DoFs are already tpmg's (the partition is
   * tpmg's slabs, make_slab_triangulation(); or one rank), is_identity()
   * says so and the bridge keeps its path without exchange.
   *
   * Values are in host memory. Calls on one object must not overlap (the
   * message buffers are kept between calls).
   */
  class Redistribution
  {
  public:
    /**
     * Collective on @p comm.
     * @param[in] lexicographic the index g of each of this rank's deal.II
     *   owned DoFs, in deal.II's order (strictly increasing; checked by the
     *   caller)
     * @param[in] dealii_first deal.II's first owned index on this rank
     * @param[in] tpmg_first, tpmg_end tpmg's owned range of g on this rank
     *   (ignored where @p whole)
     * @param[in] whole whether tpmg keeps the level whole on every rank
     * @param[in] n_global the DoFs of the level
     */
    Redistribution(const MPI_Comm                                 comm,
                   std::vector<::dealii::types::global_dof_index> lexicographic,
                   const ::dealii::types::global_dof_index        dealii_first,
                   const ::dealii::types::global_dof_index        tpmg_first,
                   const ::dealii::types::global_dof_index        tpmg_end,
                   const bool                                     whole,
                   const ::dealii::types::global_dof_index        n_global);

    ~Redistribution();

    Redistribution(const Redistribution &) = delete;
    Redistribution &
    operator=(const Redistribution &) = delete;

    /**
     * Whether on every rank deal.II's owned DoFs are tpmg's in the same
     * order, deal.II's index equal to g: no exchange is needed.
     */
    bool
    is_identity() const;

    /** Whether tpmg keeps the level whole on every rank. */
    bool
    is_whole() const;

    /** The DoFs this rank owns in deal.II. */
    std::size_t
    n_dealii() const;

    /** The entries of tpmg's owned part (whole level: all of it). */
    std::size_t
    n_tpmg() const;

    /** The index g of deal.II's @p i-th owned DoF on this rank. */
    ::dealii::types::global_dof_index
    lexicographic_index(const std::size_t i) const;

    /**
     * tpmg's owned part @p tpmg (n_tpmg() entries) from deal.II's owned
     * entries @p dealii (n_dealii()). Collective.
     */
    template <typename Number>
    void
    to_tpmg(const Number *dealii, Number *tpmg) const;

    /**
     * to_tpmg() of @p n_vectors vectors at once, in one round of messages
     * (the smoother reads its right-hand side and its iterate).
     */
    template <typename Number>
    void
    to_tpmg(const unsigned int   n_vectors,
            const Number *const *dealii,
            Number *const       *tpmg) const;

    /**
     * deal.II's owned entries @p dealii from tpmg's owned part @p tpmg.
     * Collective (local on a whole level).
     */
    template <typename Number>
    void
    to_dealii(const Number *tpmg, Number *dealii) const;

  private:
    MPI_Comm                                       comm;
    bool                                           identity;
    bool                                           whole;
    ::dealii::types::global_dof_index              dealii_first;
    ::dealii::types::global_dof_index              tpmg_first;
    std::size_t                                    n_own, n_target;
    std::vector<::dealii::types::global_dof_index> lexicographic;

    /** Distributed: the ranks this rank sends its owned entries to, and the
     * piece [send_begin, send_end) of them for each. */
    std::vector<int>         send_ranks;
    std::vector<std::size_t> send_begin, send_end;
    /** The ranks this rank receives from, the piece [receive_begin,
     * receive_end) of the receive buffer for each, and where each received
     * entry goes in tpmg's owned part. */
    std::vector<int>         receive_ranks;
    std::vector<std::size_t> receive_begin, receive_end;
    std::vector<std::size_t> receive_positions;
    /** This rank's own piece: deal.II entries [own_begin, own_end) go to
     * tpmg's own_positions. */
    std::size_t              own_begin = 0, own_end = 0;
    std::vector<std::size_t> own_positions;

    /** Whole: every rank's counts and offsets in the gathered buffer, and
     * the index g of each gathered entry. */
    std::vector<int>         counts, offsets;
    std::vector<std::size_t> gathered_positions;

    /** Message buffers, kept between calls (not for concurrent calls). */
    mutable std::vector<double> send_buffer, receive_buffer;
  };



  /**
   * The values of the finest cells tpmg owns on this rank, from the values
   * each rank has of its own cells (deal.II's locally owned cells, on any
   * partition): the bridge's one move of per-cell data (the coefficient),
   * set up and done once. Cells are named by their lexicographic index c on
   * the finest level (x fastest: tpmg's cell order); tpmg owns on this rank
   * the cells of the planes [@p tpmg_first, @p tpmg_end) along the last
   * direction, @p plane cells each (all planes where tpmg keeps the level
   * whole: a cell then goes to every rank).
   *
   * Each rank sends every rank the pairs (c, values) of its cells in that
   * rank's planes (a contiguous piece of its cells sorted by c):
   * MPI_Alltoall of the counts, then MPI_Alltoallv of the indices and of
   * the values. On tpmg's slabs every rank sends only to itself. Collective
   * on @p comm.
   *
   * @param[in] cells the index c of each cell this rank gives
   * @param[in] values @p n_per_cell values per cell of @p cells, in its order
   * @param[out] difference empty, or how many of the cells tpmg owns on
   *   this rank no rank gave or two gave (for agree_on_mismatch())
   * @return @p n_per_cell values per cell of this rank's planes, in the
   *   order of c (unset values 0)
   */
  std::vector<double>
  cell_values_to_tpmg(const MPI_Comm                    comm,
                      const std::vector<std::uint64_t> &cells,
                      const std::vector<double>        &values,
                      const unsigned int                n_per_cell,
                      const std::uint64_t               plane,
                      const std::uint64_t               tpmg_first,
                      const std::uint64_t               tpmg_end,
                      std::string                      &difference);
} // namespace tpmg::dealii::internal

#endif
