/* The grid transfer of the CUDA backend: prolongation fine += P coarse and
 * restriction coarse = P^T fine between two levels, a team per coarse cell
 * (one thread per point for degree 1), the 1D prolongation of the unit data
 * in the kernel parameters. Included only by tpmg-cuda-transfer-{2,3}d.cu. */
#ifndef TPMG_CUDA_TRANSFER_CUH
#define TPMG_CUDA_TRANSFER_CUH

#include "tpmg-cuda-launch.cuh"
#include "tpmg-cuda-tensor.cuh"
#include "tpmg-cuda-unit.cuh"

namespace tpmg_cuda {

/* The transfer kernels read the 1D prolongation from the kernel parameters
 * (as the constant kernels). Counts per fine DoF (3D), prolongation:
 * (N^2 P + N P^2 + P^3) N / (2k)^3 multiply-adds, N = k+1; restriction the same. */

/* The 1D prolongation maps the k+1 values of a coarse cell to the P = 2k+1
 * points of its two children, row t, column s: prolongation[t (k+1) + s]. A
 * fine point belongs to the coarse cell min(i / 2k, cells - 1): it is t < 2k of
 * its cell, or t = 2k of the last cell. */
template <int dim, int k, typename T>
using transfer_config =
    team_config<ipow(2 * k + 1, dim - 1),
                dim == 2 ? (k + 1) * (2 * k + 1) : (k + 1) * (2 * k + 1) * (3 * k + 2), T>;

__device__ __forceinline__ bool owned(int t, tpmg_index cell, tpmg_index cells, int k) {
  return t < 2 * k || cell == cells - 1;
}

/* fine += Z_f P Z_c coarse: the team of a coarse cell interpolates it to the
 * fine points it owns (sum factorization x, y, z); no two teams write one point. */
template <int dim, int k, typename T>
__global__ void prolongate_kernel(const tpmg_level coarse, const tpmg_level fine,
                                  const item_grid grid, const T *__restrict__ c, T *__restrict__ f,
                                  const __grid_constant__ reference_data<k, T> constants) {
  using config = transfer_config<dim, k, T>;
  constexpr int P = 2 * k + 1, N = k + 1;
  const auto prol = matrices_of<T>(fine, constants).prolongation();
  T *s1 = team_shared<T, config::values>();
  T *s2 = s1 + N * ipow(N, dim - 2) * P;
  const int rank = threadIdx.x;
  const tpmg_index item = tpmg_index(blockIdx.x) * config::teams + threadIdx.y;
  const bool active = item < grid.total;
  tpmg_index start[3] = {0, 0, 0}, cell[3] = {0, 0, 0};
  if (active)
    item_start(grid, item, start, cell);
  const tpmg_index nc0 = coarse.n[0], nc1 = coarse.n[1], nf0 = fine.n[0], nf1 = fine.n[1];
  if constexpr (dim == 2) {
    if (active && rank < N) {
      const int y = rank;
      const tpmg_index cy = k * cell[1] + y;
      T in[N], out[P];
#pragma unroll
      for (int s = 0; s < N; ++s) {
        const tpmg_index cx = k * cell[0] + s;
        in[s] = inside(cx, nc0) && inside(cy, nc1) ? c[cx + nc0 * cy] : T(0);
      }
      mat_vec<P, N, N, 0, false>(prol, in, out);
      store_line(s1 + y * P, 1, out);
    }
    __syncthreads();
    if (active && rank < P) {
      const int x = rank;
      const tpmg_index fx = 2 * k * cell[0] + x;
      T in[N], out[P];
      load_line(s1 + x, P, in);
      mat_vec<P, N, N, 0, false>(prol, in, out);
      if (owned(x, cell[0], coarse.cells[0], k) && inside(fx, nf0)) {
#pragma unroll
        for (int y = 0; y < P; ++y) {
          const tpmg_index fy = 2 * k * cell[1] + y;
          if (owned(y, cell[1], coarse.cells[1], k) && inside(fy, nf1))
            f[fx + nf0 * fy] += out[y];
        }
      }
    }
  } else {
    const tpmg_index nc2 = coarse.n[2], nf2 = fine.n[2];
    /* x: s1 [N][N][P] */
    if (active && rank < N * N) {
      const int z = rank / N, y = rank % N;
      const tpmg_index cy = k * cell[1] + y, cz = k * cell[2] + z;
      const bool in_zy = inside(cy, nc1) && inside(cz, nc2);
      T in[N], out[P];
#pragma unroll
      for (int s = 0; s < N; ++s) {
        const tpmg_index cx = k * cell[0] + s;
        in[s] = in_zy && inside(cx, nc0) ? c[cx + nc0 * (cy + nc1 * cz)] : T(0);
      }
      mat_vec<P, N, N, 0, false>(prol, in, out);
      store_line(s1 + rank * P, 1, out);
    }
    __syncthreads();
    /* y: s2 [N][P][P] */
    if (active && rank < N * P) {
      const int z = rank / P, x = rank % P;
      T in[N], out[P];
      load_line(s1 + z * N * P + x, P, in);
      mat_vec<P, N, N, 0, false>(prol, in, out);
      store_line(s2 + z * P * P + x, P, out);
    }
    __syncthreads();
    /* z, added to the owned fine points */
    if (active && rank < P * P) {
      const int y = rank / P, x = rank % P;
      const tpmg_index fx = 2 * k * cell[0] + x, fy = 2 * k * cell[1] + y;
      T in[N], out[P];
      load_line(s2 + rank, P * P, in);
      mat_vec<P, N, N, 0, false>(prol, in, out);
      if (owned(x, cell[0], coarse.cells[0], k) && owned(y, cell[1], coarse.cells[1], k) &&
          inside(fx, nf0) && inside(fy, nf1)) {
        T *p = f + fx + nf0 * fy;
#pragma unroll
        for (int z = 0; z < P; ++z) {
          const tpmg_index fz = 2 * k * cell[2] + z;
          if (owned(z, cell[2], coarse.cells[2], k) && inside(fz, nf2))
            p[nf0 * nf1 * fz] += out[z];
        }
      }
    }
  }
}

/* coarse += Z_c P^T Z_f fine over the coarse cells of one colour (cells of one
 * colour share no coarse point): each fine point counts once, for the coarse
 * cell that owns it. Colours run in order after coarse = 0, so every coarse sum
 * has a fixed order. */
template <int dim, int k, typename T>
__global__ void restrict_kernel(const tpmg_level coarse, const tpmg_level fine,
                                const item_grid grid, const T *__restrict__ f, T *__restrict__ c,
                                const __grid_constant__ reference_data<k, T> constants) {
  using config = transfer_config<dim, k, T>;
  constexpr int P = 2 * k + 1, N = k + 1;
  const auto prol = matrices_of<T>(fine, constants).prolongation();
  T *s1 = team_shared<T, config::values>();
  T *s2 = s1 + N * ipow(P, dim - 1);
  const int rank = threadIdx.x;
  const tpmg_index item = tpmg_index(blockIdx.x) * config::teams + threadIdx.y;
  const bool active = item < grid.total;
  tpmg_index cell[3] = {0, 0, 0}, t[3];
  if (active)
    item_start(grid, item, cell, t);
  const tpmg_index nc0 = coarse.n[0], nc1 = coarse.n[1], nf0 = fine.n[0], nf1 = fine.n[1];
  if constexpr (dim == 2) {
    if (active && rank < P) {
      const int x = rank;
      const tpmg_index fx = 2 * k * cell[0] + x;
      const bool use_x = owned(x, cell[0], coarse.cells[0], k) && inside(fx, nf0);
      T in[P], out[N];
#pragma unroll
      for (int y = 0; y < P; ++y) {
        const tpmg_index fy = 2 * k * cell[1] + y;
        in[y] = use_x && owned(y, cell[1], coarse.cells[1], k) && inside(fy, nf1) ? f[fx + nf0 * fy]
                                                                                  : T(0);
      }
      mat_t_vec<N, P, N>(prol, in, out);
      store_line(s1 + x, P, out);
    }
    __syncthreads();
    if (active && rank < N) {
      const int y = rank;
      const tpmg_index cy = k * cell[1] + y;
      T in[P], out[N];
      load_line(s1 + y * P, 1, in);
      mat_t_vec<N, P, N>(prol, in, out);
      if (inside(cy, nc1)) {
#pragma unroll
        for (int s = 0; s < N; ++s) {
          const tpmg_index cx = k * cell[0] + s;
          if (inside(cx, nc0))
            c[cx + nc0 * cy] += out[s];
        }
      }
    }
  } else {
    const tpmg_index nc2 = coarse.n[2], nf2 = fine.n[2];
    /* z: s1 [N][P][P] */
    if (active && rank < P * P) {
      const int y = rank / P, x = rank % P;
      const tpmg_index fx = 2 * k * cell[0] + x, fy = 2 * k * cell[1] + y;
      const bool use_xy = owned(x, cell[0], coarse.cells[0], k) &&
                          owned(y, cell[1], coarse.cells[1], k) && inside(fx, nf0) &&
                          inside(fy, nf1);
      const T *p = f + fx + nf0 * fy;
      T in[P], out[N];
#pragma unroll
      for (int z = 0; z < P; ++z) {
        const tpmg_index fz = 2 * k * cell[2] + z;
        in[z] = use_xy && owned(z, cell[2], coarse.cells[2], k) && inside(fz, nf2)
                    ? p[nf0 * nf1 * fz]
                    : T(0);
      }
      mat_t_vec<N, P, N>(prol, in, out);
      store_line(s1 + rank, P * P, out);
    }
    __syncthreads();
    /* y: s2 [N][N][P] */
    if (active && rank < N * P) {
      const int z = rank / P, x = rank % P;
      T in[P], out[N];
      load_line(s1 + z * P * P + x, P, in);
      mat_t_vec<N, P, N>(prol, in, out);
      store_line(s2 + z * N * P + x, P, out);
    }
    __syncthreads();
    /* x, added to the coarse points */
    if (active && rank < N * N) {
      const int z = rank / N, y = rank % N;
      const tpmg_index cy = k * cell[1] + y, cz = k * cell[2] + z;
      T in[P], out[N];
      load_line(s2 + rank * P, 1, in);
      mat_t_vec<N, P, N>(prol, in, out);
      if (inside(cy, nc1) && inside(cz, nc2)) {
        T *p = c + nc0 * (cy + nc1 * cz);
#pragma unroll
        for (int s = 0; s < N; ++s) {
          const tpmg_index cx = k * cell[0] + s;
          if (inside(cx, nc0))
            p[cx] += out[s];
        }
      }
    }
  }
}

/* Degree 1, one thread per coarse cell: fine += P coarse on the 2^dim fine
 * points 2 c + t (t = 0, 1 per direction) of coarse cell c, from its 2^dim
 * corners by sum factorization x, y, z (in 3D 8 loads and 48 multiply-adds
 * per cell, every weight at a compile-time index). The cells' points tile the
 * fine level but for its last point per direction, a Dirichlet point; only
 * interior points are written. A thread per fine point would load the
 * corners 2^dim times and, with t varying across a warp, index the weights
 * at run time. */
template <int dim, typename T>
__global__ void __launch_bounds__(point_threads)
    prolongate_cell_kernel(const item_grid grid, const tpmg_level coarse, const tpmg_level fine,
                           const T *__restrict__ c, T *__restrict__ f,
                           const __grid_constant__ reference_data<1, T> constants) {
  const auto prol = matrices_of<T>(fine, constants).prolongation();
  constexpr int S = dim == 3 ? 2 : 1; /* corners and fine points along z */
  for_each_point(grid, [&](const tpmg_index(&cell)[3]) {
    const tpmg_index cn0 = coarse.n[0], cn01 = coarse.n[0] * coarse.n[1];
    const tpmg_index fn0 = fine.n[0], fn01 = fine.n[0] * fine.n[1];
    const tpmg_index corner = cell[0] + cn0 * cell[1] + cn01 * cell[2];
    const tpmg_index first = 2 * cell[0] + fn0 * 2 * cell[1] + fn01 * 2 * cell[2];
    T a[S][2][2]; /* [s2][s1][t0]: the corners contracted in x */
#pragma unroll
    for (int s2 = 0; s2 < S; ++s2)
#pragma unroll
      for (int s1 = 0; s1 < 2; ++s1) {
        T in[2];
#pragma unroll
        for (int s0 = 0; s0 < 2; ++s0) {
          const bool use = inside(cell[0] + s0, coarse.n[0]) && inside(cell[1] + s1, coarse.n[1]) &&
                           (dim == 2 || inside(cell[2] + s2, coarse.n[2]));
          in[s0] = use ? c[corner + s0 + cn0 * s1 + cn01 * s2] : T(0);
        }
#pragma unroll
        for (int t0 = 0; t0 < 2; ++t0) {
          a[s2][s1][t0] = T(0) + prol[t0 * 2] * in[0];
          a[s2][s1][t0] += prol[t0 * 2 + 1] * in[1];
        }
      }
    T b[S][2][2]; /* [s2][t1][t0]: and in y */
#pragma unroll
    for (int s2 = 0; s2 < S; ++s2)
#pragma unroll
      for (int t1 = 0; t1 < 2; ++t1)
#pragma unroll
        for (int t0 = 0; t0 < 2; ++t0) {
          b[s2][t1][t0] = T(0) + prol[t1 * 2] * a[s2][0][t0];
          b[s2][t1][t0] += prol[t1 * 2 + 1] * a[s2][1][t0];
        }
#pragma unroll
    for (int t2 = 0; t2 < S; ++t2)
#pragma unroll
      for (int t1 = 0; t1 < 2; ++t1)
#pragma unroll
        for (int t0 = 0; t0 < 2; ++t0) {
          T value = b[0][t1][t0];
          if constexpr (dim == 3) {
            value = T(0) + prol[t2 * 2] * b[0][t1][t0];
            value += prol[t2 * 2 + 1] * b[1][t1][t0];
          }
          if (inside(2 * cell[0] + t0, fine.n[0]) && inside(2 * cell[1] + t1, fine.n[1]) &&
              (dim == 2 || inside(2 * cell[2] + t2, fine.n[2])))
            f[first + t0 + fn0 * t1 + fn01 * t2] += value;
        }
  });
}

/* Degree 1, one thread per coarse point: coarse = P^T fine gathered from the
 * fine points 2j-1, 2j, 2j+1 per direction, each with the weight of the
 * coarse cell that owns it (the transpose of the degree-1 prolongation).
 * 3^dim (cached) loads and 13 multiply-adds (3D) per coarse point. */
template <int dim, typename T>
__global__ void __launch_bounds__(point_threads)
    restrict_point_kernel(const item_grid grid, const tpmg_level coarse, const tpmg_level fine,
                          const T *__restrict__ f, T *__restrict__ c,
                          const __grid_constant__ reference_data<1, T> constants) {
  const auto prol = matrices_of<T>(fine, constants).prolongation();
  for_each_point(grid, [&](const tpmg_index(&j)[3]) {
    const tpmg_index g = j[0] + coarse.n[0] * (j[1] + coarse.n[1] * j[2]);
    bool interior = true;
    T w[3][3]; /* [d][fine point 2j - 1 + o]: its weight for coarse point j */
#pragma unroll
    for (int d = 0; d < 3; ++d)
#pragma unroll
      for (int o = 0; o < 3; ++o)
        w[d][o] = T(0);
#pragma unroll
    for (int d = 0; d < dim; ++d) {
      interior = interior && inside(j[d], coarse.n[d]);
#pragma unroll
      for (int o = 0; o < 3; ++o) {
        const tpmg_index i = 2 * j[d] - 1 + o;
        const tpmg_index cell = i / 2 < coarse.cells[d] - 1 ? i / 2 : coarse.cells[d] - 1;
        const tpmg_index s = j[d] - cell;
        if (inside(i, fine.n[d]) && s >= 0 && s <= 1)
          w[d][o] = prol[int(i - 2 * cell) * 2 + int(s)];
      }
    }
    if (!interior) {
      c[g] = T(0);
      return;
    }
    T b[3] = {0, 0, 0};
#pragma unroll
    for (int o2 = 0; o2 < (dim == 3 ? 3 : 1); ++o2) {
      T a[3];
#pragma unroll
      for (int o1 = 0; o1 < 3; ++o1) {
        T sum = 0;
#pragma unroll
        for (int o0 = 0; o0 < 3; ++o0) {
          const tpmg_index i0 = 2 * j[0] - 1 + o0, i1 = 2 * j[1] - 1 + o1,
                           i2 = dim == 3 ? 2 * j[2] - 1 + o2 : 0;
          if (w[0][o0] != T(0) && w[1][o1] != T(0) && (dim == 2 || w[2][o2] != T(0)))
            sum += w[0][o0] * f[i0 + fine.n[0] * (i1 + fine.n[1] * i2)];
        }
        a[o1] = sum;
      }
      T sum = 0;
#pragma unroll
      for (int o1 = 0; o1 < 3; ++o1)
        sum += w[1][o1] * a[o1];
      b[o2] = sum;
    }
    T value = b[0];
    if constexpr (dim == 3) {
      value = 0;
#pragma unroll
      for (int o2 = 0; o2 < 3; ++o2)
        value += w[2][o2] * b[o2];
    }
    c[g] = value;
  });
}

template <int dim>
tpmg_status prolongate_add(tpmg_context *ctx, const tpmg_level *coarse, const tpmg_level *fine,
                           tpmg_precision prec, const void *c, void *f) {
  item_grid grid{};
  grid.total = 1;
  for (int d = 0; d < 3; ++d) {
    grid.count[d] = d < dim ? coarse->cells[d] : 1;
    grid.total *= grid.count[d];
  }
  return select<dim>(ctx, fine->degree, prec, [&](auto K, auto zero) {
    constexpr int k = decltype(K)::value;
    using T = decltype(zero);
    reference_data<k, T> constants;
    TPMG_CALL(level_constants(ctx, fine, &constants));
    if constexpr (k == 1) {
      item_grid cells = grid;
      for (int d = 0; d < 3; ++d)
        cells.step[d] = 1;
      return launch_points(ctx, "prolongate_cell_kernel", prolongate_cell_kernel<dim, T>, cells,
                           *coarse, *fine, static_cast<const T *>(c), static_cast<T *>(f),
                           constants);
    }
    return launch_teams<transfer_config<dim, k, T>>(
        ctx, "prolongate_kernel", prolongate_kernel<dim, k, T>, grid.total, *coarse, *fine, grid,
        static_cast<const T *>(c), static_cast<T *>(f), constants);
  });
}

template <int dim>
tpmg_status restrict_(tpmg_context *ctx, const tpmg_level *coarse, const tpmg_level *fine,
                      tpmg_precision prec, const void *f, void *c) {
  return select<dim>(ctx, fine->degree, prec, [&](auto K, auto zero) {
    constexpr int k = decltype(K)::value;
    using T = decltype(zero);
    reference_data<k, T> constants;
    TPMG_CALL(level_constants(ctx, fine, &constants));
    if constexpr (k == 1)
      return launch_points(ctx, "restrict_point_kernel", restrict_point_kernel<dim, T>,
                           point_grid(coarse), *coarse, *fine, static_cast<const T *>(f),
                           static_cast<T *>(c), constants);
    TPMG_CALL(set(ctx, prec, coarse->n_dofs, 0.0, c));
    for (int colour = 0; colour < (1 << dim); ++colour) {
      item_grid grid{};
      grid.total = 1;
      for (int d = 0; d < 3; ++d) {
        const bool real = d < dim;
        const tpmg_index parity = (colour >> d) & 1;
        grid.count[d] = real ? (coarse->cells[d] - parity + 1) / 2 : 1;
        grid.offset[d] = real ? parity : 0;
        grid.step[d] = real ? 2 : 0;
        grid.total *= grid.count[d];
      }
      using config = transfer_config<dim, k, T>;
      const tpmg_status status = launch_teams<config>(
          ctx, "restrict_kernel", restrict_kernel<dim, k, T>, grid.total, *coarse, *fine, grid,
          static_cast<const T *>(f), static_cast<T *>(c), constants);
      if (status != TPMG_SUCCESS)
        return status;
    }
    return TPMG_SUCCESS;
  });
}

} // namespace tpmg_cuda

#endif
