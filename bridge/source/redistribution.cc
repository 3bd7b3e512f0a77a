/* The deal.II bridge of tpmg, internal: moving a level's values between
 * deal.II's partition and tpmg's. */
#include "redistribution.h"

#include <deal.II/base/exceptions.h>
#include <deal.II/base/mpi.h>

#include <tpmg/dealii/exceptions.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <numeric>
#include <string>
#include <type_traits>

using namespace ::dealii;

namespace tpmg::dealii::internal
{
  namespace
  {
    template <typename Number>
    MPI_Datatype
    mpi_type()
    {
      return std::is_same_v<Number, double> ? MPI_DOUBLE : MPI_FLOAT;
    }

    void
    check_mpi(const int ierr)
    {
      AssertThrow(ierr == MPI_SUCCESS, ExcMPI(ierr));
    }

    int
    as_int(const std::size_t n)
    {
      AssertThrow(n <=
                    static_cast<std::size_t>(std::numeric_limits<int>::max()),
                  ExcUnsupported("a message of " + std::to_string(n) +
                                 " values between two ranks: more than MPI's "
                                 "int counts"));
      return static_cast<int>(n);
    }

    /** @p buffer as room for @p n values of Number, grown where needed
     * (kept between calls: no allocation per call). */
    template <typename Number>
    Number *
    room(std::vector<double> &buffer, const std::size_t n)
    {
      const std::size_t n_doubles =
        (n * sizeof(Number) + sizeof(double) - 1) / sizeof(double);
      if (buffer.size() < n_doubles)
        buffer.resize(n_doubles);
      return reinterpret_cast<Number *>(buffer.data());
    }

    // the tags of the two directions
    constexpr int tag_to_tpmg = 31, tag_to_dealii = 32;
  } // namespace



  Redistribution::Redistribution(
    const MPI_Comm                       comm_in,
    std::vector<types::global_dof_index> lexicographic_in,
    const types::global_dof_index        dealii_first,
    const types::global_dof_index        tpmg_first_in,
    const types::global_dof_index        tpmg_end,
    const bool                           whole,
    const types::global_dof_index        n_global)
    : comm(MPI_COMM_SELF)
    , identity(true)
    , whole(whole)
    , dealii_first(dealii_first)
    , tpmg_first(whole ? 0 : tpmg_first_in)
    , n_own(lexicographic_in.size())
    , n_target(whole ? n_global : tpmg_end - tpmg_first_in)
    , lexicographic(std::move(lexicographic_in))
  {
    const bool         mpi = Utilities::MPI::job_supports_mpi();
    const unsigned int n_ranks =
      mpi ? Utilities::MPI::n_mpi_processes(comm_in) : 1;
    for (std::size_t i = 0; i < n_own && identity; ++i)
      identity = lexicographic[i] == dealii_first + i;
    if (!whole)
      identity = identity && tpmg_first == dealii_first && n_target == n_own;
    if (n_ranks > 1)
      identity = Utilities::MPI::min(identity ? 1u : 0u, comm_in) == 1;
    if (n_ranks == 1)
      {
        AssertThrow(identity, ExcMessage("one rank whose DoFs are not tpmg's"));
        lexicographic.clear();
        return;
      }
    if (identity && !whole)
      {
        lexicographic.clear();
        return;
      }
    check_mpi(MPI_Comm_dup(comm_in, &comm));
    const unsigned int         rank = Utilities::MPI::this_mpi_process(comm);
    std::vector<std::uint64_t> g(lexicographic.begin(), lexicographic.end());

    if (whole)
      {
        counts = Utilities::MPI::all_gather(comm, as_int(n_own));
        offsets.assign(n_ranks, 0);
        std::size_t total = 0;
        for (unsigned int r = 0; r < n_ranks; ++r)
          {
            offsets[r] = as_int(total);
            total += counts[r];
          }
        AssertThrow(total == n_global,
                    ExcMessage("the ranks own " + std::to_string(total) +
                               " of " + std::to_string(n_global) + " DoFs"));
        std::vector<std::uint64_t> gathered(total);
        check_mpi(MPI_Allgatherv(g.data(),
                                 as_int(n_own),
                                 MPI_UINT64_T,
                                 gathered.data(),
                                 counts.data(),
                                 offsets.data(),
                                 MPI_UINT64_T,
                                 comm));
        // the same on every rank
        for (std::size_t j = 0; j < total && identity; ++j)
          identity = gathered[j] == j;
        if (!identity)
          gathered_positions.assign(gathered.begin(), gathered.end());
        return;
      }

    // distributed: every rank's tpmg range, and the piece of this rank's
    // (sorted) owned DoFs that falls into each
    const std::vector<types::global_dof_index> firsts =
      Utilities::MPI::all_gather(comm, tpmg_first);
    const std::vector<types::global_dof_index> ends =
      Utilities::MPI::all_gather(comm, tpmg_end);
    std::vector<int> n_send(n_ranks, 0), n_receive(n_ranks, 0);
    std::size_t      n_covered = 0;
    for (unsigned int s = 0; s < n_ranks; ++s)
      {
        const std::size_t begin = std::lower_bound(lexicographic.begin(),
                                                   lexicographic.end(),
                                                   firsts[s]) -
                                  lexicographic.begin();
        const std::size_t end = std::lower_bound(lexicographic.begin(),
                                                 lexicographic.end(),
                                                 ends[s]) -
                                lexicographic.begin();
        n_covered += end - begin;
        if (end == begin)
          continue;
        if (s == rank)
          {
            own_begin = begin;
            own_end   = end;
            for (std::size_t i = begin; i < end; ++i)
              own_positions.push_back(lexicographic[i] - tpmg_first);
            continue;
          }
        n_send[s] = as_int(end - begin);
        send_ranks.push_back(s);
        send_begin.push_back(begin);
        send_end.push_back(end);
      }
    check_mpi(MPI_Alltoall(
      n_send.data(), 1, MPI_INT, n_receive.data(), 1, MPI_INT, comm));
    std::size_t total = 0;
    for (unsigned int r = 0; r < n_ranks; ++r)
      if (n_receive[r] > 0)
        {
          receive_ranks.push_back(r);
          receive_begin.push_back(total);
          total += n_receive[r];
          receive_end.push_back(total);
        }
    // internal invariants, thrown on every rank if one rank fails them (no
    // rank left waiting in the next message)
    const auto agree = [&](const bool ok, const std::string &what) {
      const unsigned int first = Utilities::MPI::min(ok ? n_ranks : rank, comm);
      AssertThrow(first == n_ranks,
                  ExcMessage("rank " + std::to_string(first) + ": " + what));
    };
    agree(n_covered == n_own && total + own_positions.size() == n_target,
          "deal.II's owned DoFs and tpmg's ranges do not match");

    // once: the indices g of the values each rank will receive
    std::vector<std::uint64_t> received(total);
    std::vector<MPI_Request>   requests;
    requests.reserve(send_ranks.size() + receive_ranks.size());
    for (std::size_t j = 0; j < receive_ranks.size(); ++j)
      {
        requests.emplace_back();
        check_mpi(MPI_Irecv(received.data() + receive_begin[j],
                            as_int(receive_end[j] - receive_begin[j]),
                            MPI_UINT64_T,
                            receive_ranks[j],
                            tag_to_tpmg,
                            comm,
                            &requests.back()));
      }
    for (std::size_t j = 0; j < send_ranks.size(); ++j)
      {
        requests.emplace_back();
        check_mpi(MPI_Isend(g.data() + send_begin[j],
                            as_int(send_end[j] - send_begin[j]),
                            MPI_UINT64_T,
                            send_ranks[j],
                            tag_to_tpmg,
                            comm,
                            &requests.back()));
      }
    check_mpi(
      MPI_Waitall(requests.size(), requests.data(), MPI_STATUSES_IGNORE));
    receive_positions.resize(total);
    bool inside = true;
    for (std::size_t j = 0; j < total; ++j)
      {
        inside = inside && received[j] >= tpmg_first &&
                 received[j] < tpmg_first + n_target;
        receive_positions[j] = received[j] - tpmg_first;
      }
    agree(inside, "a DoF sent outside the receiving rank's tpmg range");
  }



  Redistribution::~Redistribution()
  {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (comm != MPI_COMM_SELF && !finalized)
      MPI_Comm_free(&comm);
  }



  bool
  Redistribution::is_identity() const
  {
    return identity;
  }



  bool
  Redistribution::is_whole() const
  {
    return whole;
  }



  std::size_t
  Redistribution::n_dealii() const
  {
    return n_own;
  }



  std::size_t
  Redistribution::n_tpmg() const
  {
    return n_target;
  }



  types::global_dof_index
  Redistribution::lexicographic_index(const std::size_t i) const
  {
    return lexicographic.empty() ? dealii_first + i : lexicographic[i];
  }



  template <typename Number>
  void
  Redistribution::to_tpmg(const Number *dealii, Number *tpmg) const
  {
    to_tpmg(1, &dealii, &tpmg);
  }



  template <typename Number>
  void
  Redistribution::to_tpmg(const unsigned int   n_vectors,
                          const Number *const *dealii,
                          Number *const       *tpmg) const
  {
    const std::size_t v = n_vectors;
    if (identity && (!whole || comm == MPI_COMM_SELF))
      {
        for (std::size_t a = 0; a < v; ++a)
          std::copy(dealii[a], dealii[a] + n_own, tpmg[a]);
        return;
      }
    if (whole && identity)
      {
        for (std::size_t a = 0; a < v; ++a)
          check_mpi(MPI_Allgatherv(dealii[a],
                                   as_int(n_own),
                                   mpi_type<Number>(),
                                   tpmg[a],
                                   counts.data(),
                                   offsets.data(),
                                   mpi_type<Number>(),
                                   comm));
        return;
      }
    if (whole)
      {
        // every rank's entries of vector a after its entries of a - 1
        Number *own      = room<Number>(send_buffer, v * n_own);
        Number *gathered = room<Number>(receive_buffer, v * n_target);
        for (std::size_t a = 0; a < v; ++a)
          std::copy(dealii[a], dealii[a] + n_own, own + a * n_own);
        std::vector<int> v_counts(counts), v_offsets(offsets);
        for (std::size_t r = 0; r < counts.size(); ++r)
          {
            v_counts[r]  = as_int(v * counts[r]);
            v_offsets[r] = as_int(v * offsets[r]);
          }
        check_mpi(MPI_Allgatherv(own,
                                 as_int(v * n_own),
                                 mpi_type<Number>(),
                                 gathered,
                                 v_counts.data(),
                                 v_offsets.data(),
                                 mpi_type<Number>(),
                                 comm));
        for (std::size_t r = 0; r < counts.size(); ++r)
          for (std::size_t a = 0; a < v; ++a)
            for (int i = 0; i < counts[r]; ++i)
              tpmg[a][gathered_positions[offsets[r] + i]] =
                gathered[v * offsets[r] + a * counts[r] + i];
        return;
      }

    // distributed: a piece of n entries travels as the n entries of each
    // vector in turn
    Number *received =
      room<Number>(receive_buffer, v * receive_positions.size());
    Number                  *packed = nullptr;
    std::vector<MPI_Request> requests;
    requests.reserve(send_ranks.size() + receive_ranks.size());
    for (std::size_t j = 0; j < receive_ranks.size(); ++j)
      {
        requests.emplace_back();
        check_mpi(MPI_Irecv(received + v * receive_begin[j],
                            as_int(v * (receive_end[j] - receive_begin[j])),
                            mpi_type<Number>(),
                            receive_ranks[j],
                            tag_to_tpmg,
                            comm,
                            &requests.back()));
      }
    if (v > 1)
      {
        std::size_t n_packed = 0;
        for (std::size_t j = 0; j < send_ranks.size(); ++j)
          n_packed += v * (send_end[j] - send_begin[j]);
        packed = room<Number>(send_buffer, n_packed);
      }
    for (std::size_t j = 0, at = 0; j < send_ranks.size(); ++j)
      {
        const std::size_t n    = send_end[j] - send_begin[j];
        const Number     *data = dealii[0] + send_begin[j];
        if (v > 1)
          {
            for (std::size_t a = 0; a < v; ++a)
              std::copy(dealii[a] + send_begin[j],
                        dealii[a] + send_end[j],
                        packed + at + a * n);
            data = packed + at;
            at += v * n;
          }
        requests.emplace_back();
        // the send buffer is not written: MPI-2 signatures take no const
        check_mpi(MPI_Isend(const_cast<Number *>(data),
                            as_int(v * n),
                            mpi_type<Number>(),
                            send_ranks[j],
                            tag_to_tpmg,
                            comm,
                            &requests.back()));
      }
    for (std::size_t a = 0; a < v; ++a)
      for (std::size_t j = 0; j < own_positions.size(); ++j)
        tpmg[a][own_positions[j]] = dealii[a][own_begin + j];
    check_mpi(
      MPI_Waitall(requests.size(), requests.data(), MPI_STATUSES_IGNORE));
    for (std::size_t j = 0; j < receive_ranks.size(); ++j)
      {
        const std::size_t n = receive_end[j] - receive_begin[j];
        for (std::size_t a = 0; a < v; ++a)
          for (std::size_t i = 0; i < n; ++i)
            tpmg[a][receive_positions[receive_begin[j] + i]] =
              received[v * receive_begin[j] + a * n + i];
      }
  }



  template <typename Number>
  void
  Redistribution::to_dealii(const Number *tpmg, Number *dealii) const
  {
    if (whole)
      {
        for (std::size_t i = 0; i < n_own; ++i)
          dealii[i] = tpmg[lexicographic_index(i)];
        return;
      }
    if (identity)
      {
        std::copy(tpmg, tpmg + n_own, dealii);
        return;
      }
    Number *sent = room<Number>(send_buffer, receive_positions.size());
    for (std::size_t j = 0; j < receive_positions.size(); ++j)
      sent[j] = tpmg[receive_positions[j]];
    std::vector<MPI_Request> requests;
    requests.reserve(send_ranks.size() + receive_ranks.size());
    for (std::size_t j = 0; j < send_ranks.size(); ++j)
      {
        requests.emplace_back();
        check_mpi(MPI_Irecv(dealii + send_begin[j],
                            as_int(send_end[j] - send_begin[j]),
                            mpi_type<Number>(),
                            send_ranks[j],
                            tag_to_dealii,
                            comm,
                            &requests.back()));
      }
    for (std::size_t j = 0; j < receive_ranks.size(); ++j)
      {
        requests.emplace_back();
        check_mpi(MPI_Isend(sent + receive_begin[j],
                            as_int(receive_end[j] - receive_begin[j]),
                            mpi_type<Number>(),
                            receive_ranks[j],
                            tag_to_dealii,
                            comm,
                            &requests.back()));
      }
    for (std::size_t j = 0; j < own_positions.size(); ++j)
      dealii[own_begin + j] = tpmg[own_positions[j]];
    check_mpi(
      MPI_Waitall(requests.size(), requests.data(), MPI_STATUSES_IGNORE));
  }



  std::vector<double>
  cell_values_to_tpmg(const MPI_Comm                    comm,
                      const std::vector<std::uint64_t> &cells,
                      const std::vector<double>        &values,
                      const unsigned int                n_per_cell,
                      const std::uint64_t               plane,
                      const std::uint64_t               tpmg_first,
                      const std::uint64_t               tpmg_end,
                      std::string                      &difference)
  {
    AssertDimension(values.size(), cells.size() * n_per_cell);
    const unsigned int         n_ranks = Utilities::MPI::job_supports_mpi() ?
                                           Utilities::MPI::n_mpi_processes(comm) :
                                           1;
    std::vector<std::uint64_t> firsts(1, tpmg_first), ends(1, tpmg_end);
    if (n_ranks > 1)
      {
        firsts = Utilities::MPI::all_gather(comm, tpmg_first);
        ends   = Utilities::MPI::all_gather(comm, tpmg_end);
      }

    // this rank's cells sorted by c: each rank's planes are a contiguous
    // piece of them, packed in rank order
    std::vector<std::size_t> order(cells.size());
    std::iota(order.begin(), order.end(), std::size_t(0));
    std::sort(order.begin(),
              order.end(),
              [&](const std::size_t a, const std::size_t b) {
                return cells[a] < cells[b];
              });
    const auto position = [&](const std::uint64_t c) {
      return std::lower_bound(order.begin(),
                              order.end(),
                              c,
                              [&](const std::size_t i, const std::uint64_t c) {
                                return cells[i] < c;
                              }) -
             order.begin();
    };
    std::vector<int>           n_send(n_ranks, 0), n_receive(n_ranks, 0);
    std::vector<std::uint64_t> send_cells;
    std::vector<double>        send_values;
    for (unsigned int s = 0; s < n_ranks; ++s)
      {
        const std::size_t begin = position(firsts[s] * plane),
                          end   = position(ends[s] * plane);
        n_send[s]               = as_int(end - begin);
        for (std::size_t i = begin; i < end; ++i)
          {
            send_cells.push_back(cells[order[i]]);
            send_values.insert(send_values.end(),
                               values.begin() + order[i] * n_per_cell,
                               values.begin() + (order[i] + 1) * n_per_cell);
          }
      }

    std::vector<std::uint64_t> received_cells;
    std::vector<double>        received_values;
    if (n_ranks > 1)
      {
        check_mpi(MPI_Alltoall(
          n_send.data(), 1, MPI_INT, n_receive.data(), 1, MPI_INT, comm));
        // counts and offsets of cells (n = 1) and of values (n = n_per_cell)
        const auto displacements = [&](const std::vector<int> &count,
                                       const unsigned int      n,
                                       std::vector<int>       &counts,
                                       std::vector<int>       &offsets) {
          counts.resize(n_ranks);
          offsets.resize(n_ranks);
          std::size_t total = 0;
          for (unsigned int r = 0; r < n_ranks; ++r)
            {
              counts[r]  = as_int(std::size_t(count[r]) * n);
              offsets[r] = as_int(total);
              total += counts[r];
            }
          return total;
        };
        std::vector<int> send_counts, send_offsets, receive_counts,
          receive_offsets;
        displacements(n_send, 1, send_counts, send_offsets);
        received_cells.resize(
          displacements(n_receive, 1, receive_counts, receive_offsets));
        check_mpi(MPI_Alltoallv(send_cells.data(),
                                send_counts.data(),
                                send_offsets.data(),
                                MPI_UINT64_T,
                                received_cells.data(),
                                receive_counts.data(),
                                receive_offsets.data(),
                                MPI_UINT64_T,
                                comm));
        displacements(n_send, n_per_cell, send_counts, send_offsets);
        received_values.resize(displacements(
          n_receive, n_per_cell, receive_counts, receive_offsets));
        check_mpi(MPI_Alltoallv(send_values.data(),
                                send_counts.data(),
                                send_offsets.data(),
                                MPI_DOUBLE,
                                received_values.data(),
                                receive_counts.data(),
                                receive_offsets.data(),
                                MPI_DOUBLE,
                                comm));
      }
    else
      {
        received_cells.swap(send_cells);
        received_values.swap(send_values);
      }

    // each received cell lies in this rank's planes (sent only there)
    const std::uint64_t first = tpmg_first * plane,
                        n_own = (tpmg_end - tpmg_first) * plane;
    std::vector<double>        result(n_own * n_per_cell, 0.);
    std::vector<unsigned char> given(n_own, 0);
    std::size_t                n_twice = 0;
    for (std::size_t j = 0; j < received_cells.size(); ++j)
      {
        const std::uint64_t i = received_cells[j] - first;
        n_twice += given[i];
        given[i] = 1;
        std::copy(received_values.begin() + j * n_per_cell,
                  received_values.begin() + (j + 1) * n_per_cell,
                  result.begin() + i * n_per_cell);
      }
    const std::size_t n_missing = std::count(given.begin(), given.end(), 0);
    if (n_missing > 0 || n_twice > 0)
      difference = std::to_string(n_missing) + " of the " +
                   std::to_string(n_own) +
                   " finest cells tpmg owns on this rank have no value and " +
                   std::to_string(n_twice) + " have two";
    return result;
  }



  template void
  Redistribution::to_tpmg(const double *, double *) const;
  template void
  Redistribution::to_tpmg(const float *, float *) const;
  template void
  Redistribution::to_tpmg(const unsigned int,
                          const double *const *,
                          double *const *) const;
  template void
  Redistribution::to_tpmg(const unsigned int,
                          const float *const *,
                          float *const *) const;
  template void
  Redistribution::to_dealii(const double *, double *) const;
  template void
  Redistribution::to_dealii(const float *, float *) const;
} // namespace tpmg::dealii::internal
