/* The level operator of the CUDA backend on a level with a variable
 * coefficient a (tpmg_level::coefficient): dst = sum_K (a_K A^K + c M^K) src,
 * cell by cell, for every variant of the backend's name (the vertex-patch and
 * brick kernels of tpmg-cuda-operator.cuh assume a = 1), and its counted work.
 *
 * A^K is the cell's stiffness: with one value a_K per cell (CELLS) the
 * Kronecker sum sum_d K_d (x) M_others of the cell matrices; with a at the
 * cell's Gauss points (QUADRATURE: tpmg_level::quadrature, QGauss(k+1))
 * sum_d B_d^T diag(w_q |J| a_q / h_d^2) B_d with B_d the reference basis'
 * derivative in direction d and its values in the others, at the Gauss points
 * (|J| = prod_d h_d). The reaction's c M^K is the same cell mass matrix in
 * both (QUADRATURE: by the Gauss rule, exact for it). Sum factorization as in
 * paper §3.1.1, on one cell per thread team (tpmg-cuda-launch.cuh's team
 * kernels): a thread owns one line of the cell's (k+1)^dim tensor in each
 * stage; tensors in shared memory, [z][y][x].
 *
 * Determinism without atomics: the cells are coloured by the parity of their
 * indices, 2^dim colours, one launch each in a fixed order; two cells of one
 * colour share no DoF, so each launch adds to dst entries no other team of it
 * touches, and every entry's sum runs in the colour order whatever the
 * scheduling. dst is zeroed first and its Dirichlet entries copied from src
 * last; src's Dirichlet entries are read as zero.
 *
 * The 1D matrices (the unit cell's mass and stiffness, the basis' values and
 * derivatives at the Gauss points, the Gauss weights, all on [0,1]) are the
 * same for every level: built on the host in double from the grid's unit data
 * (tpmg_level::unit, QGauss(k+1)) once per degree and precision (cached in
 * backend_data::cell_reference), and passed with the level's scale factors by
 * value in the kernel parameters (constant bank), as the constant kernels
 * pass theirs (tpmg-cuda-unit.cuh). */
#include <stdlib.h>

#include "tpmg-cuda-launch.cuh"
#include "tpmg-cuda-tensor.cuh"
#include "tpmg-cuda.cuh"

namespace tpmg_cuda {

namespace {

/* The kernel parameter: the unit cell's 1D data (row-major, N = k+1) and the
 * level's scale factors. */
template <int k, typename T> struct cell_data {
  static constexpr int N = k + 1;
  T mass[N * N];      /* Mref on [0,1], exact */
  T stiffness[N * N]; /* Kref on [0,1], exact */
  T values[N * N];    /* [q][i]: phi_i at Gauss point q */
  T gradients[N * N]; /* [q][i]: phi_i' at Gauss point q */
  T weights[N];       /* the Gauss weights on [0,1] */
  /* of the level: */
  T coefficient[3]; /* CELLS: prod_e h_e / h_d^2, the Kronecker sum's factors;
                       QUADRATURE: 1 / h_d^2 */
  T volume;         /* prod_d h_d = |J| */
  T reaction;       /* c prod_d h_d, the mass term's factor */
};

/* From the unit data u: the basis' derivatives at the points by the
 * collocation derivative (exact for degree k), the cell matrices by the
 * Gauss rule (exact: their integrands have degree 2k and 2k - 2, at most
 * 2k + 1). */
template <int k, typename T> void build_cell_data(const tpmg_unit_data *u, cell_data<k, T> *out) {
  constexpr int N = k + 1;
  double values[N * N], gradients[N * N];
  for (int q = 0; q < N; ++q)
    for (int i = 0; i < N; ++i) {
      double g = 0;
      for (int p = 0; p < N; ++p)
        g += u->gauss_gradients[q * N + p] * u->gauss_values[p * N + i];
      values[q * N + i] = u->gauss_values[q * N + i];
      gradients[q * N + i] = g;
    }
  for (int i = 0; i < N; ++i)
    for (int j = 0; j < N; ++j) {
      double m = 0, s = 0;
      for (int q = 0; q < N; ++q) {
        m += u->gauss_weights[q] * values[q * N + i] * values[q * N + j];
        s += u->gauss_weights[q] * gradients[q * N + i] * gradients[q * N + j];
      }
      out->mass[i * N + j] = T(m);
      out->stiffness[i * N + j] = T(s);
    }
  for (int i = 0; i < N * N; ++i) {
    out->values[i] = T(values[i]);
    out->gradients[i] = T(gradients[i]);
  }
  for (int q = 0; q < N; ++q)
    out->weights[q] = T(u->gauss_weights[q]);
}

/* The kernel parameter of level `lvl`, the unit data cached per precision and
 * degree. */
template <int k, typename T>
tpmg_status level_cell_data(tpmg_context *ctx, const tpmg_level *lvl, bool quadrature,
                            cell_data<k, T> *c) {
  backend_data *data = static_cast<backend_data *>(tpmg_backend_data(ctx));
  void *&cached = data->cell_reference[precision_of<T>::value][k];
  if (!cached) {
    auto *fresh = static_cast<cell_data<k, T> *>(malloc(sizeof(cell_data<k, T>)));
    TPMG_CHECK(ctx, fresh, TPMG_ERROR_MEMORY, "allocating the unit cell data failed");
    build_cell_data(lvl->unit, fresh);
    cached = fresh;
  }
  *c = *static_cast<const cell_data<k, T> *>(cached);
  double volume = 1;
  for (int d = 0; d < lvl->dim; ++d)
    volume *= lvl->h[d];
  for (int d = 0; d < 3; ++d) {
    const double inverse_h2 = d < lvl->dim ? 1.0 / (lvl->h[d] * lvl->h[d]) : 0.0;
    c->coefficient[d] = T(quadrature ? inverse_h2 : volume * inverse_h2);
  }
  c->volume = T(volume);
  c->reaction = T(lvl->reaction * volume);
  return TPMG_SUCCESS;
}

/* One team per cell: a thread per line, (k+1)^(dim-1) of them. Shared memory
 * per team: CELLS two tensors of (k+1)^dim values, QUADRATURE three. */
template <int dim, int k, typename T, bool quadrature>
using cell_config = team_config<ipow(k + 1, dim - 1), (quadrature ? 3 : 2) * ipow(k + 1, dim), T>;

/* dst += (a_K A^K + c M^K) src on the interior entries of the cells of one
 * colour (grid: their indices), src's Dirichlet entries read as zero.
 * CELLS, stages z, x, y (3D; 2D y, x):
 *   z: s0 = M_z u, s1 = K_z u                              (lines (x, y), from src)
 *   x: s0 = M_x s0, s1 = c_z M_x s1 + c_x K_x s0           (lines (y, z), in place)
 *   y: dst += M_y (a_K s1 + c' s0) + a_K c_y K_y s0        (lines (x, z), to dst)
 * with c_d = prod h / h_d^2 and c' = c prod h (the unit matrices' factors).
 * QUADRATURE, with V and G the values and gradients at the Gauss points
 * (stages z, x, y forward, the quadrature point operation, y, x, z back):
 *   z: s0 = V_z u, s2 = G_z u
 *   x: s0 = V_x s0, s1 = G_x s0, s2 = V_x s2
 *   y: at the points: v = V_y s0, g_x = V_y s1, g_y = G_y s0, g_z = V_y s2,
 *      scaled by w_q |J| (a_q / h_d^2 for g_d, c for v), then
 *      s0 = V_y^T v + G_y^T g_y, s1 = V_y^T g_x, s2 = V_y^T g_z
 *   x: s0 = V_x^T s0 + G_x^T s1, s2 = V_x^T s2
 *   z: dst += V_z^T s0 + G_z^T s2
 * (2D: y forward, x there and back, y back.) Each stage's lines are its
 * threads' own, so in-place updates need no barrier between read and write. */
template <int dim, int k, typename T, bool quadrature>
__global__ void cell_laplace_kernel(const tpmg_level lvl, const item_grid grid,
                                    const T *__restrict__ src, T *__restrict__ dst,
                                    const __grid_constant__ cell_data<k, T> c) {
  using config = cell_config<dim, k, T, quadrature>;
  constexpr int N = k + 1, NV = ipow(N, dim);
  const param_matrix<T> M{c.mass}, K{c.stiffness}, V{c.values}, G{c.gradients};
  T *s0 = team_shared<T, config::values>();
  T *s1 = s0 + NV;
  const int rank = threadIdx.x;
  const tpmg_index item = tpmg_index(blockIdx.x) * config::teams + threadIdx.y;
  const bool active = item < grid.total;
  tpmg_index cell[3] = {0, 0, 0}, t[3];
  if (active)
    item_start(grid, item, cell, t);
  const tpmg_index n0 = lvl.n[0], n1 = lvl.n[1];
  const tpmg_index first[3] = {cell[0] * k, cell[1] * k, cell[2] * k};
  const tpmg_index index = cell[0] + lvl.cells[0] * (cell[1] + lvl.cells[1] * cell[2]);
  const T *a = static_cast<const T *>(quadrature ? lvl.quadrature[precision_of<T>::value]
                                                 : lvl.coefficient[precision_of<T>::value]);
  if constexpr (dim == 2) {
    /* y, lines x: the column from src */
    if (active) {
      const int x = rank;
      const tpmg_index gx = first[0] + x;
      T u[N], m[N], s[N];
#pragma unroll
      for (int y = 0; y < N; ++y) {
        const tpmg_index gy = first[1] + y;
        u[y] = inside(gx, n0) && inside(gy, n1) ? src[gx + n0 * gy] : T(0);
      }
      if constexpr (quadrature) {
        mat_vec<N, N, N, 0, false>(V, u, m);
        mat_vec<N, N, N, 0, false>(G, u, s);
      } else {
        mat_vec<N, N, N, 0, false>(M, u, m);
        mat_vec<N, N, N, 0, false>(K, u, s);
      }
      store_line(s0 + x, N, m);
      store_line(s1 + x, N, s);
    }
    __syncthreads();
    /* x, lines y */
    if (active) {
      const int y = rank;
      T p[N], q[N], o[N];
      load_line(s0 + y * N, 1, p);
      load_line(s1 + y * N, 1, q);
      if constexpr (quadrature) {
        /* at the points (x, y): v = V_x p, g_x = G_x p, g_y = V_x q */
        T v[N], gx[N], gy[N];
        mat_vec<N, N, N, 0, false>(V, p, v);
        mat_vec<N, N, N, 0, false>(G, p, gx);
        mat_vec<N, N, N, 0, false>(V, q, gy);
        const T *aq = a + index * NV + y * N;
#pragma unroll
        for (int x = 0; x < N; ++x) {
          const T w = c.weights[x] * c.weights[y] * c.volume, f = w * aq[x];
          v[x] *= w * T(lvl.reaction);
          gx[x] *= f * c.coefficient[0];
          gy[x] *= f * c.coefficient[1];
        }
        mat_t_vec<N, N, N>(V, v, p);
        mat_t_vec<N, N, N>(G, gx, o);
#pragma unroll
        for (int x = 0; x < N; ++x)
          p[x] += o[x];
        mat_t_vec<N, N, N>(V, gy, q);
        store_line(s0 + y * N, 1, p);
        store_line(s1 + y * N, 1, q);
      } else {
        /* o = M_x (a_K c_y q + c' p) + a_K c_x K_x p, along x: to dst */
        const T aK = a[index];
        T mq[N], kp[N];
#pragma unroll
        for (int x = 0; x < N; ++x) {
          mq[x] = aK * c.coefficient[1] * q[x] + c.reaction * p[x];
          kp[x] = aK * c.coefficient[0] * p[x];
        }
        mat_vec<N, N, N, 0, false>(M, mq, o);
        mat_vec<N, N, N, 0, true>(K, kp, o);
        const tpmg_index gy = first[1] + y;
        if (inside(gy, n1))
#pragma unroll
          for (int x = 0; x < N; ++x) {
            const tpmg_index gx = first[0] + x;
            if (inside(gx, n0))
              dst[gx + n0 * gy] += o[x];
          }
      }
    }
    if constexpr (quadrature) {
      __syncthreads();
      /* y back, lines x: dst += V_y^T s0 + G_y^T s1 */
      if (active) {
        const int x = rank;
        T p[N], q[N], o[N], r[N];
        load_line(s0 + x, N, p);
        load_line(s1 + x, N, q);
        mat_t_vec<N, N, N>(V, p, o);
        mat_t_vec<N, N, N>(G, q, r);
        const tpmg_index gx = first[0] + x;
        if (inside(gx, n0))
#pragma unroll
          for (int y = 0; y < N; ++y) {
            const tpmg_index gy = first[1] + y;
            if (inside(gy, n1))
              dst[gx + n0 * gy] += o[y] + r[y];
          }
      }
    }
  } else {
    constexpr int NN = N * N;
    const tpmg_index n2 = lvl.n[2];
    T *s2 = s1 + NV; /* QUADRATURE only */
    /* z, lines (x, y): the column from src */
    if (active) {
      const int x = rank % N, y = rank / N;
      const tpmg_index gx = first[0] + x, gy = first[1] + y;
      const bool in_xy = inside(gx, n0) && inside(gy, n1);
      const T *p = src + gx + n0 * gy;
      T u[N], m[N], s[N];
#pragma unroll
      for (int z = 0; z < N; ++z) {
        const tpmg_index gz = first[2] + z;
        u[z] = in_xy && inside(gz, n2) ? p[n0 * n1 * gz] : T(0);
      }
      if constexpr (quadrature) {
        mat_vec<N, N, N, 0, false>(V, u, m);
        mat_vec<N, N, N, 0, false>(G, u, s);
        store_line(s0 + x + N * y, NN, m);
        store_line(s2 + x + N * y, NN, s);
      } else {
        mat_vec<N, N, N, 0, false>(M, u, m);
        mat_vec<N, N, N, 0, false>(K, u, s);
        store_line(s0 + x + N * y, NN, m);
        store_line(s1 + x + N * y, NN, s);
      }
    }
    __syncthreads();
    /* x, lines (y, z) */
    if (active) {
      const int y = rank % N, z = rank / N;
      T *l0 = s0 + N * y + NN * z, *l1 = s1 + N * y + NN * z;
      if constexpr (quadrature) {
        T *l2 = s2 + N * y + NN * z;
        T p[N], q[N], v[N], g[N], w[N];
        load_line(l0, 1, p);
        load_line(l2, 1, q);
        mat_vec<N, N, N, 0, false>(V, p, v);
        mat_vec<N, N, N, 0, false>(G, p, g);
        mat_vec<N, N, N, 0, false>(V, q, w);
        store_line(l0, 1, v);
        store_line(l1, 1, g);
        store_line(l2, 1, w);
      } else {
        T p[N], q[N], b[N], s[N];
        load_line(l0, 1, p);
        load_line(l1, 1, q);
        mat_vec<N, N, N, 0, false>(M, p, b);
        scale_line(c.coefficient[2], q);
        scale_line(c.coefficient[0], p);
        mat_vec<N, N, N, 0, false>(M, q, s);
        mat_vec<N, N, N, 0, true>(K, p, s);
        store_line(l0, 1, b);
        store_line(l1, 1, s);
      }
    }
    __syncthreads();
    /* y, lines (x, z) */
    if (active) {
      const int x = rank % N, z = rank / N;
      T *l0 = s0 + x + NN * z, *l1 = s1 + x + NN * z;
      if constexpr (quadrature) {
        T *l2 = s2 + x + NN * z;
        T p[N], q[N], r[N], v[N], gx[N], gy[N], gz[N];
        load_line(l0, N, p);
        load_line(l1, N, q);
        load_line(l2, N, r);
        mat_vec<N, N, N, 0, false>(V, p, v);
        mat_vec<N, N, N, 0, false>(G, p, gy);
        mat_vec<N, N, N, 0, false>(V, q, gx);
        mat_vec<N, N, N, 0, false>(V, r, gz);
        /* the points (x, y, z), y along the line */
        const T *aq = a + index * NV + x + NN * z;
        const T wxz = c.weights[x] * c.weights[z] * c.volume;
#pragma unroll
        for (int y = 0; y < N; ++y) {
          const T w = wxz * c.weights[y], f = w * aq[N * y];
          v[y] *= w * T(lvl.reaction);
          gx[y] *= f * c.coefficient[0];
          gy[y] *= f * c.coefficient[1];
          gz[y] *= f * c.coefficient[2];
        }
        mat_t_vec<N, N, N>(V, v, p);
        mat_t_vec<N, N, N>(G, gy, r);
#pragma unroll
        for (int y = 0; y < N; ++y)
          p[y] += r[y];
        mat_t_vec<N, N, N>(V, gx, q);
        mat_t_vec<N, N, N>(V, gz, r);
        store_line(l0, N, p);
        store_line(l1, N, q);
        store_line(l2, N, r);
      } else {
        /* o = M_y (a_K q + c' p) + a_K c_y K_y p, along y: to dst */
        T p[N], q[N], o[N];
        load_line(l0, N, p);
        load_line(l1, N, q);
        const T aK = a[index];
        T mq[N], kp[N];
#pragma unroll
        for (int y = 0; y < N; ++y) {
          mq[y] = aK * q[y] + c.reaction * p[y];
          kp[y] = aK * c.coefficient[1] * p[y];
        }
        mat_vec<N, N, N, 0, false>(M, mq, o);
        mat_vec<N, N, N, 0, true>(K, kp, o);
        const tpmg_index gx = first[0] + x, gz = first[2] + z;
        if (inside(gx, n0) && inside(gz, n2)) {
          T *d = dst + gx + n0 * n1 * gz;
#pragma unroll
          for (int y = 0; y < N; ++y) {
            const tpmg_index gy = first[1] + y;
            if (inside(gy, n1))
              d[n0 * gy] += o[y];
          }
        }
      }
    }
    if constexpr (quadrature) {
      __syncthreads();
      /* x back, lines (y, z) */
      if (active) {
        const int y = rank % N, z = rank / N;
        T *l0 = s0 + N * y + NN * z, *l1 = s1 + N * y + NN * z, *l2 = s2 + N * y + NN * z;
        T p[N], q[N], r[N], o[N];
        load_line(l0, 1, p);
        load_line(l1, 1, q);
        load_line(l2, 1, r);
        mat_t_vec<N, N, N>(V, p, o);
        mat_t_vec<N, N, N>(G, q, p);
#pragma unroll
        for (int x = 0; x < N; ++x)
          o[x] += p[x];
        mat_t_vec<N, N, N>(V, r, q);
        store_line(l0, 1, o);
        store_line(l2, 1, q);
      }
      __syncthreads();
      /* z back, lines (x, y): dst += V_z^T s0 + G_z^T s2 */
      if (active) {
        const int x = rank % N, y = rank / N;
        T p[N], q[N], o[N], r[N];
        load_line(s0 + x + N * y, NN, p);
        load_line(s2 + x + N * y, NN, q);
        mat_t_vec<N, N, N>(V, p, o);
        mat_t_vec<N, N, N>(G, q, r);
        const tpmg_index gx = first[0] + x, gy = first[1] + y;
        if (inside(gx, n0) && inside(gy, n1)) {
          T *d = dst + gx + n0 * gy;
#pragma unroll
          for (int z = 0; z < N; ++z) {
            const tpmg_index gz = first[2] + z;
            if (inside(gz, n2))
              d[n0 * n1 * gz] += o[z] + r[z];
          }
        }
      }
    }
  }
}

/* The cells of colour `colour` (c_d = (colour >> d) & 1): indices c_d + 2 t. */
item_grid colour_grid(const tpmg_level *lvl, int colour) {
  item_grid g{};
  g.total = 1;
  for (int d = 0; d < 3; ++d) {
    const bool real = d < lvl->dim;
    const tpmg_index c = (colour >> d) & 1;
    g.count[d] = real ? (lvl->cells[d] - c + 1) / 2 : 1;
    g.offset[d] = real ? c : 0;
    g.step[d] = real ? 2 : 0;
    g.total *= g.count[d];
  }
  return g;
}

template <int dim>
tpmg_status laplace_cells(tpmg_context *ctx, const tpmg_level *lvl, tpmg_precision prec,
                          const void *src, void *dst) {
  const bool quadrature = lvl->quadrature[prec] != nullptr;
  TPMG_CALL(set(ctx, prec, lvl->n_dofs, 0.0, dst));
  TPMG_CALL(select<dim>(ctx, lvl->degree, prec, [&](auto K, auto zero) -> tpmg_status {
    constexpr int k = decltype(K)::value;
    using T = decltype(zero);
    cell_data<k, T> c;
    TPMG_CALL(level_cell_data(ctx, lvl, quadrature, &c));
    const T *s = static_cast<const T *>(src);
    T *d = static_cast<T *>(dst);
    using cells = cell_config<dim, k, T, false>;
    using points = cell_config<dim, k, T, true>;
    for (int colour = 0; colour < (1 << dim); ++colour) {
      const item_grid grid = colour_grid(lvl, colour);
      const tpmg_status status = quadrature
                                     ? launch_teams<points>(ctx, "cell_laplace_kernel (quadrature)",
                                                            cell_laplace_kernel<dim, k, T, true>,
                                                            grid.total, *lvl, grid, s, d, c)
                                     : launch_teams<cells>(ctx, "cell_laplace_kernel (cells)",
                                                           cell_laplace_kernel<dim, k, T, false>,
                                                           grid.total, *lvl, grid, s, d, c);
      if (status != TPMG_SUCCESS)
        return status;
    }
    return TPMG_SUCCESS;
  }));
  return copy_boundary(ctx, lvl, prec, src, dst);
}

} // namespace

tpmg_status laplace_coefficient(tpmg_context *ctx, const tpmg_level *lvl, tpmg_precision prec,
                                const void *src, void *dst) {
  return lvl->dim == 2 ? laplace_cells<2>(ctx, lvl, prec, src, dst)
                       : laplace_cells<3>(ctx, lvl, prec, src, dst);
}

/* Counts per DoF, N = k+1, one cell per k^dim DoFs, the scalings by the
 * coefficient and the factors at the points neglected:
 *   multiply-adds per cell  CELLS 3D 7 N^4 (z 2, x 3, y 2 contractions of N^2
 *                           lines of N^2), 2D 4 N^3; QUADRATURE 3D 18 N^4
 *                           (9 forward, 9 back), 2D 10 N^3
 *   shared-memory words     CELLS 3D 8 N^3 (writes 4, reads 4), 2D 4 N^2;
 *                           QUADRATURE 3D 20 N^3, 2D 8 N^2
 *   device-memory words     each launch reads src and reads and writes dst on
 *                           its cells' points, (N/k)^dim per DoF over the
 *                           2^dim colours for each, none cached between
 *                           launches; the zeroing of dst 1; the coefficient
 *                           1/k^dim (CELLS) or (N/k)^dim (QUADRATURE); the
 *                           Dirichlet copy neglected. */
tpmg_status operator_work_coefficient(const tpmg_level *lvl, tpmg_precision prec, tpmg_work *work) {
  const int dim = lvl->dim, k = lvl->degree;
  const bool quadrature = lvl->quadrature[prec] != nullptr;
  const double N = k + 1, cells = 1.0 / (dim == 2 ? k * k : k * k * k);
  const double lines = dim == 2 ? N : N * N, volume = lines * N, overlap = volume * cells;
  const double contractions = dim == 2 ? (quadrature ? 10 : 4) : (quadrature ? 18 : 7);
  work->flops = 2.0 * contractions * lines * N * N * cells;
  work->shared_words = (dim == 2 ? (quadrature ? 8 : 4) : (quadrature ? 20 : 8)) * volume * cells;
  work->matrix_words = 0;
  work->memory_words = 1 + 3 * overlap + (quadrature ? overlap : cells);
  work->kernel = quadrature ? "cell-quadrature" : "cell";
  return TPMG_SUCCESS;
}

} // namespace tpmg_cuda
