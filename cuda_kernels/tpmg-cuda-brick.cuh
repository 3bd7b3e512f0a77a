/* The brick kernels ("cuda/brick", and "cuda" for most degrees): the level operator on bricks of
 * cells, by the tensor-product structure of the whole level operator (the operator only; the
 * smoother has no BRICK kernel).
 *
 * Mathematics. On the Cartesian level the operator is a Kronecker sum of 1D
 * level matrices (paper eq. 2.5, there per cell; the sum over cells keeps the
 * form): in 3D
 *   A = c_0 (M ⊗ M ⊗ K) + c_1 (M ⊗ K ⊗ M) + c_2 (K ⊗ M ⊗ M)   ([z][y][x]),
 * with the unit 1D matrices M, K of the whole line and c_d = Π_e h_e / h_d²
 * (reference_data::coefficient, see tpmg-cuda-tensor.cuh); in 2D
 * A = c_0 (M ⊗ K) + c_1 (K ⊗ M); a reaction adds r (M ⊗ M ⊗ M) (2D: r (M ⊗ M)),
 * r = c Π_e h_e (reaction_mass_line), in the y stage below (2D: x). A 1D row
 * of point i, p = i mod k, is
 *   p = 0 (a vertex): row k of the vertex-patch matrix centred at i, columns
 *                     i-k..i+k (2k+1 nonzeros);
 *   p > 0:            row k+p of the patch centred at the cell's lower vertex
 *                     i-p, columns i-p..i-p+k (k+1 nonzeros),
 * so R = C k consecutive rows starting at a vertex hold R (k+2) nonzeros
 * (brick_rows). Dirichlet columns are zero (src_B read as zero), and rows are
 * only needed for interior points, whose cells on both sides exist.
 *
 * Bricks. A block owns a brick: R = C k points per direction in x (and y in
 * 3D), starting at vertex v, and RT = G R_s points in the slowest direction (z
 * in 3D, y in 2D), G segments of R_s = C_s k; bricks tile the level, the last
 * one per direction may be partial and also owns the last (Dirichlet) point.
 * Its rows need the window [v-k, v+R] per direction, W = R + k + 1 points.
 * The first stage reads the slow direction's columns of the window straight
 * from device memory (neighbouring threads on neighbouring x, so loads
 * coalesce) into registers and contracts them for the owned slow rows only;
 * the later stages contract one more direction each, always for the owned rows
 * of the directions already contracted, in shared memory (3D, per segment):
 *   z: m = M_z w, s = K_z w           on W x W lines, R_s outputs each
 *   y: a = M_y m, b = c_1 K_y m + c_2 M_y s + r a  on R_s x W lines, R outputs
 *   x: out = c_0 K_x a + M_x b        on R_s x R lines, R outputs
 * each over its input (a thread reads its whole line first), and a last pass
 * stores out (dst_B = src_B) along x. Only the x and y halos cost arithmetic:
 * the z stage computes owned rows only, so the slow direction's halo costs
 * device-memory loads (from L1/L2) alone.
 * 3D marches the block through its G segments upwards, one after another in
 * the same shared memory, and loads each z point of the window once: segment
 * g's window [z_g - k, z_g + R_s] shares the k+1 points [z_g - k, z_g] with
 * the one below, and of these only row 0 (the vertex z_g) reads the k points
 * below z_g. So a z line carries 3 values from segment to segment (shared
 * memory, [3][W][W]): the point z_g and the vertex row's M and K partial sums
 * over the k points below it; a segment loads its R_s new points per line.
 * (2D computes the G segments at once, each with its own window of W_s =
 * R_s + k + 1 points.)
 * Counts per DoF (3D, with w = W / R):
 *   multiply-adds  (k+2) (2 w² + 3 w + 2)   (the vertex-patch gather of CONSTANT:
 *                  (2 k P³ + 3 k² P² + 2 k³ P) / k³ over the band; 3D Q3 100,
 *                  BRICK C = 4: 48; Q7 165, C = 2: 105)
 *   shared memory  4 w² + 4 w + 2 words (writes + reads), the carry 6 w² / R_s
 *   device memory  loads w² (G R_s + k + 1) / (G R_s) (L1/L2; DRAM: src about
 *                  once; 3D Q7 double C = 2, C_s = 1, G = 8: 2.82, with G = 1
 *                  as before 5.29), one store
 * 2D: multiply-adds (k+2) (2 w + 2), shared memory 4 w + 2, loads w W_s / R_s.
 * Instructions (sm_90, CUDA 13): ptxas loads each matrix entry into a uniform
 * register (ULDC) before its multiply-add, so the stages issue about two
 * instructions per multiply-add; the per-point index work is kept small (the
 * z loads step a pointer, the 3D store pass steps its row indices): 3D Q7
 * double about 270 issued per DoF by count of the SASS loops (Nsight Compute
 * measured 352 before the store pass and z loads were simplified).
 * The shapes (C, C_s, G per dimension, degree and precision, brick_table) keep
 * the lines of the later stages short (W at most 25 in 3D, 33 in 2D: two of
 * them live in registers) and the shared memory so that two (3D Q8
 * double) to eight blocks fit an SM. Threads: about one per line of the second
 * stage (of a segment in 3D). */
#ifndef TPMG_CUDA_BRICK_CUH
#define TPMG_CUDA_BRICK_CUH

#include "tpmg-cuda-tensor.cuh"
#include "tpmg-cuda.cuh"

namespace tpmg_cuda {

/* Cells per brick in x (3D: and y), per segment in the slowest direction, and
 * segments. */
struct brick_shape {
  int cells, cells_slow, segments;
  int lines;  /* 3D: z lines per thread whose loads are issued together (0: all, at most 4) */
  int blocks; /* blocks per SM the registers are limited for (0: brick_config's estimate) */
  bool early; /* 3D: the y stage stores a before it computes b (two lines of W live, not three) */
};

/* The shapes, measured on the H200 (3D: the kernel alone, median of 10
 * launches on 5e7 DoFs, against alternatives of G, C_s, lines and blocks in
 * the same run; 2D: tpmg-bench, 2.6e7-8.5e7 DoFs); what is kept was the
 * fastest. 3D: C from 8 at k = 1 down to 2 from k = 5 on (W at most 25, two
 * lines of W live in registers), C_s so that a segment's shared memory stays
 * within 20-95 KB, G = 2-16 segments marched (the more, the fewer z window
 * points loaded twice, but the fewer blocks). E.g. 3D Q7 double C = 2, C_s =
 * 1, G = 8: 43.6 GDoF/s (G = 4: 41.2, 16: 44.3, 1: 36.8; on 721M DoFs G = 8:
 * 45.6, 16: 45.2); Q6 double with 4 blocks per SM (123 registers): 63.4 (3
 * blocks, 168 registers: 52.0); Q8 double 2 blocks per SM at 128 registers
 * (232 bytes spilled): 39.0 (1 block, 255 registers: 29.3). With the cheaper
 * z loads and store pass, Q7 double 3 blocks per SM at 128 registers (116
 * bytes spilled): 48.9 (2 blocks, 168 registers: 47.4). The early store of a
 * where it measured faster (same run, against the late one): double Q4 81.6
 * (72.7), Q5 71.0 (69.7), Q7 49.6 (48.9), Q8 47.0 (44.0); float Q6 95.1
 * (93.3), Q8 93.7 (90.3); elsewhere within 1%, and double Q6 57.5 (67.2: it
 * spills at 4 blocks per SM). 2D: W about 20-35
 * and G R_s lines of the second stage; C = 1 in double from k = 9 (C = 2
 * measured no faster). */
template <int dim, int k, typename T> constexpr brick_shape brick_table() {
  constexpr bool dbl = sizeof(T) == 8;
  if constexpr (dim == 3) {
    switch (k) {
    case 1:
      return {8, dbl ? 8 : 16, 4, 1, 0};
    case 2:
      return dbl ? brick_shape{5, 4, 2, 0, 0} : brick_shape{5, 6, 4, 1, 0};
    case 3:
      return dbl ? brick_shape{4, 3, 2, 0, 0} : brick_shape{4, 6, 4, 1, 0};
    case 4:
      return dbl ? brick_shape{3, 2, 4, 1, 0, true} : brick_shape{3, 3, 4, 1, 0};
    case 5:
      return dbl ? brick_shape{2, 2, 4, 1, 3, true} : brick_shape{2, 3, 4, 1, 0};
    case 6:
      return dbl ? brick_shape{2, 1, 8, 1, 4} : brick_shape{2, 1, 8, 1, 0, true};
    case 7:
      return dbl ? brick_shape{2, 1, 8, 1, 3, true} : brick_shape{2, 2, 8, 1, 0};
    default:
      return dbl ? brick_shape{2, 1, 16, 1, 2, true} : brick_shape{2, 2, 4, 1, 0, true};
    }
  } else {
    switch (k) {
    case 1:
      return {16, 8, 16};
    case 2:
      return dbl ? brick_shape{8, 4, 8} : brick_shape{8, 4, 16};
    case 3:
      return {5, 3, 14};
    case 4:
      return dbl ? brick_shape{4, 2, 8} : brick_shape{6, 2, 16};
    case 5:
      return dbl ? brick_shape{3, 2, 7} : brick_shape{4, 2, 13};
    case 6:
      return dbl ? brick_shape{3, 2, 5} : brick_shape{4, 2, 10};
    case 7:
      return dbl ? brick_shape{2, 2, 9} : brick_shape{3, 2, 9};
    case 8:
      return dbl ? brick_shape{2, 1, 16} : brick_shape{3, 1, 16};
    case 9:
      return {dbl ? 1 : 2, 1, 14};
    default:
      return {dbl ? 1 : 2, 1, 13};
    }
  }
}

/* The smallest s >= n with s = m (mod 32): a plane stride that keeps the banks
 * of lines spread over several planes as if they were contiguous. */
constexpr int bank_stride(int n, int m) {
  return n + ((m - n) % 32 + 32) % 32;
}

template <int dim, int k, typename T> struct brick_config {
  static constexpr brick_shape shape = brick_table<dim, k, T>();
  static constexpr int R = shape.cells * k, W = R + k + 1;
  static constexpr int RS = shape.cells_slow * k, WS = RS + k + 1, G = shape.segments, RT = G * RS;
  /* 3D: s1, s2 [RS][W][PW] (plane S1), the later stages' results over their
   * inputs, then the carry [3][W][W]. 2D: s1, s2 [RT][P1]; out [RT][P3] after
   * them. Odd line strides: threads reading lines along x do not share
   * banks. */
  static constexpr int PW = W | 1, S1 = bank_stride(W * PW, W), P1 = W | 1, P3 = R | 1;
  static constexpr int values = dim == 3 ? 2 * RS * S1 + 3 * W * W : 2 * RT * P1 + RT * P3;
  static constexpr size_t bytes = size_t(values) * sizeof(T);
  /* about one line per thread in the second stage (3D: of one segment) */
  static constexpr int lines2 = dim == 3 ? RS * W : RT;
  static constexpr int threads_raw = (lines2 + 31) / 32 * 32;
  static constexpr int threads = threads_raw < 64 ? 64 : threads_raw > 256 ? 256 : threads_raw;
  /* 3D: the z lines of a thread whose loads are issued together */
  static constexpr int lines_all = (W * W + threads - 1) / threads;
  static constexpr int lines_per_thread = shape.lines > 0 ? shape.lines
                                          : lines_all < 4 ? lines_all
                                                          : 4;
  /* blocks per SM: by shared memory, by the registers of two lines of W and R
   * results (plus addressing), at most 2048 threads */
  static constexpr int line_registers = (2 * W + R) * int(sizeof(T) / 4) + 32;
  static constexpr int by_memory = int((227 * 1024) / bytes);
  static constexpr int by_registers = 65536 / (threads * line_registers);
  static constexpr int by_threads = 2048 / threads;
  static constexpr int min3(int a, int b, int c) {
    return a < b ? (a < c ? a : c) : (b < c ? b : c);
  }
  static constexpr int min_blocks = shape.blocks > 0 ? shape.blocks
                                    : min3(by_memory, by_registers, by_threads) > 1
                                        ? min3(by_memory, by_registers, by_threads)
                                        : 1;
};

/* out[o] (+)= (A x in)[o] for the R = C k rows of a line that start at a
 * vertex, from the window line in[0..R+k] (the row of out[o] is point k + o of
 * the window): R (k+2) multiply-adds, compile-time matrix indices. With
 * `carried`, the window points 0..k-1 are not read: out[0] holds their part
 * of row 0 (only row 0 has columns below point k). */
template <int k, int R, bool add, bool carried = false, typename T, typename Mat>
__device__ __forceinline__ void brick_rows(const Mat &A, const T (&in)[R + k + 1], T (&out)[R]) {
  constexpr int P = 2 * k + 1;
#pragma unroll
  for (int o = 0; o < R; ++o) {
    const int p = o % k,
              first = p == 0 && !(carried && o == 0) ? 0 : k; /* patch columns first..2k */
    const int j0 = o - p;                                     /* window index of patch column 0 */
    T sum = add || (carried && o == 0) ? out[o] : T(0);
#pragma unroll
    for (int c = first; c < P; ++c)
      sum += A[(k + p) * P + c] * in[j0 + c];
    out[o] = sum;
  }
}

/* The bricks of a level: count[d] per direction, extent[d] points each (the
 * last one fewer or one more). */
struct brick_grid {
  tpmg_index count[3];
  tpmg_index extent[3];
};

template <int dim, int k, typename T>
__global__ void __launch_bounds__(brick_config<dim, k, T>::threads,
                                  brick_config<dim, k, T>::min_blocks)
    laplace_brick_kernel(const tpmg_level lvl, const brick_grid grid, const T *__restrict__ src,
                         T *__restrict__ dst,
                         const __grid_constant__ reference_data<k, T> constants) {
  using config = brick_config<dim, k, T>;
  constexpr int R = config::R, W = config::W, RS = config::RS, WS = config::WS, RT = config::RT,
                NT = config::threads;
  extern __shared__ __align__(16) unsigned char tpmg_cuda_shared[];
  T *const shared = reinterpret_cast<T *>(tpmg_cuda_shared);
  const auto mat = matrices_of<T>(lvl, constants);
  const auto M = mat.mass(0), K = mat.stiffness(0);
  const tpmg_index n0 = lvl.n[0], n1 = lvl.n[1];
  /* the brick: first point v[d], points e[d] to store */
  tpmg_index v[3], e[3];
  bool last = false, last_z = false;
  {
    tpmg_index b = blockIdx.x;
#pragma unroll
    for (int d = 0; d < 3; ++d) {
      const tpmg_index t = b % grid.count[d];
      b /= grid.count[d];
      v[d] = t * grid.extent[d];
      const bool end = t == grid.count[d] - 1;
      e[d] = end ? lvl.n[d] - v[d] : grid.extent[d];
      last = last || (end && d < dim);
      last_z = last_z || (end && d == dim - 1);
    }
  }
  if constexpr (dim == 3) {
    constexpr int PW = config::PW, S1 = config::S1, WW = W * W, LT = config::lines_per_thread;
    const tpmg_index n2 = lvl.n[2];
    T *const s1 = shared, *const s2 = s1 + RS * S1, *const carry = s2 + RS * S1;
    const tpmg_index plane = n0 * n1;
    /* the window point k (the vertex below the segment) and the vertex row's
     * partial sums over the points below it, per z line of the window */
    for (int l = threadIdx.x; l < WW; l += NT) {
      const tpmg_index gx = v[0] - k + l % W, gy = v[1] - k + l / W, gz = v[2] - k;
      const bool in_xy = inside(gx, n0) && inside(gy, n1);
      const T *p = src + (in_xy ? gx + n0 * gy : 0);
      T col[k + 1];
#pragma unroll
      for (int z = 0; z <= k; ++z)
        col[z] = in_xy && inside(gz + z, n2) ? p[plane * (gz + z)] : T(0);
      T pm = T(0), ps = T(0);
#pragma unroll
      for (int c = 0; c < k; ++c) {
        pm += M[k * (2 * k + 1) + c] * col[c];
        ps += K[k * (2 * k + 1) + c] * col[c];
      }
      carry[l] = pm;
      carry[WW + l] = ps;
      carry[2 * WW + l] = col[k];
    }
    /* the segments with a point of the brick; in the last brick along z the
     * last segment also stores the Dirichlet point after it */
    const int ez = int(e[2]), segments = (ez - int(last_z) + RS - 1) / RS;
    for (int g = 0; g < segments; ++g) {
      const tpmg_index z0 = v[2] + g * RS; /* the segment's first row, window point k */
      /* z: s1 = M_z w, s2 = K_z w on the segment's rows, [RS][W][PW]; the
       * window's points k+1..k+RS from device memory, the loads of LT lines
       * issued together */
      /* the window's points z0 + 1 + z with z < z_inside are inside the level */
      const int z_inside = int(n2 - 2 - z0 < RS ? n2 - 2 - z0 : RS);
      for (int l0 = threadIdx.x; l0 < WW; l0 += LT * NT) {
        T col[LT][RS];
#pragma unroll
        for (int i = 0; i < LT; ++i) {
          const int l = l0 + i * NT;
          const tpmg_index gx = v[0] - k + l % W, gy = v[1] - k + l / W;
          const bool in_xy = l < WW && inside(gx, n0) && inside(gy, n1);
          const T *p = src + (in_xy ? gx + n0 * gy + plane * (z0 + 1) : 0);
#pragma unroll
          for (int z = 0; z < RS; ++z, p += plane)
            col[i][z] = in_xy && z < z_inside ? *p : T(0);
        }
#pragma unroll
        for (int i = 0; i < LT; ++i) {
          const int l = l0 + i * NT;
          if (l < WW) {
            T w[WS], m[RS], s[RS];
#pragma unroll
            for (int z = 0; z < k; ++z)
              w[z] = T(0); /* not read: their part is carried */
            w[k] = carry[2 * WW + l];
#pragma unroll
            for (int z = 0; z < RS; ++z)
              w[k + 1 + z] = col[i][z];
            m[0] = carry[l];
            s[0] = carry[WW + l];
            brick_rows<k, RS, false, true>(M, w, m);
            brick_rows<k, RS, false, true>(K, w, s);
            T pm = T(0), ps = T(0);
#pragma unroll
            for (int c = 0; c < k; ++c) {
              pm += M[k * (2 * k + 1) + c] * w[RS + c];
              ps += K[k * (2 * k + 1) + c] * w[RS + c];
            }
            carry[l] = pm;
            carry[WW + l] = ps;
            carry[2 * WW + l] = w[RS + k];
            T *q = s1 + l % W + PW * (l / W);
#pragma unroll
            for (int o = 0; o < RS; ++o) {
              q[o * S1] = m[o];
              q[RS * S1 + o * S1] = s[o];
            }
          }
        }
      }
      __syncthreads();
      /* y: a = M_y m, b = c_1 K_y m + c_2 M_y s + r a over m, s: [RS][R][PW],
       * r a the reaction's (M_x takes b, K_x takes a) */
      for (int l = threadIdx.x; l < RS * W; l += NT) {
        T *const p1 = s1 + (l / W) * S1 + l % W, *const p2 = p1 + RS * S1;
        T t[W], b[R];
        load_line(p1, PW, t);
        {
          T a[R];
          brick_rows<k, R, false>(M, t, a);
          if constexpr (config::shape.early)
            store_line(p1, PW, a);
          scale_line(mat.coefficient(1), t);
          brick_rows<k, R, false>(K, t, b);
          if (mat.reaction() != T(0)) {
#pragma unroll
            for (int i = 0; i < R; ++i)
              b[i] += mat.reaction() * a[i];
          }
          if constexpr (!config::shape.early)
            store_line(p1, PW, a);
        }
        load_line(p2, PW, t);
        scale_line(mat.coefficient(2), t);
        brick_rows<k, R, true>(M, t, b);
        store_line(p2, PW, b);
      }
      __syncthreads();
      /* x: out = c_0 K_x a + M_x b over a: [RS][R][R] */
      for (int l = threadIdx.x; l < RS * R; l += NT) {
        T *const p1 = s1 + (l / R) * S1 + (l % R) * PW, *const p2 = p1 + RS * S1;
        T t[W], o[R];
        load_line(p1, 1, t);
        scale_line(mat.coefficient(0), t);
        brick_rows<k, R, false>(K, t, o);
        load_line(p2, 1, t);
        brick_rows<k, R, true>(M, t, o);
        store_line(p1, 1, o);
      }
      __syncthreads();
      /* dst = out inside, src on the Dirichlet points; a point local == extent
       * (the last brick's last point) is a Dirichlet point */
      if (!last) {
        /* a thread keeps its x and stores the rows (y, z) r0, r0 + RPI, ...,
         * stepping its indices (no division by an extent, no 64-bit product
         * per point); of the Dirichlet points only the level's lower faces
         * can lie in a brick that is not the last in any direction */
        constexpr int RPI = NT / R, DY = RPI % R, DZ = RPI / R;
        const int x = threadIdx.x % R, r0 = threadIdx.x / R;
        if (r0 < RPI) {
          int y = r0 % R, z = r0 / R, si = z * S1 + y * PW + x;
          const tpmg_index step = DY * n0 + DZ * plane, wrap = plane - R * n0;
          tpmg_index gi = v[0] + x + n0 * (v[1] + y) + plane * (z0 + z);
          /* the rows of this thread, with `interior(y, z)` for the points
           * of dst to take from out (the others copy src) */
          const auto store = [&](auto interior) {
            while (z < RS) {
              dst[gi] = interior(y, z) ? s1[si] : src[gi];
              y += DY;
              z += DZ;
              gi += step;
              si += DY * PW + DZ * S1;
              if (y >= R) {
                y -= R;
                ++z;
                gi += wrap;
                si += S1 - R * PW;
              }
            }
          };
          if (v[0] > 0 && v[1] > 0 && z0 > 0) {
            store([](int, int) { return true; });
          } else {
            const bool in_x = v[0] + x > 0;
            const int y_first = v[1] == 0, z_first = z0 == 0;
            store([=](int y_, int z_) { return in_x && y_ >= y_first && z_ >= z_first; });
          }
        }
      } else {
        const int ex = int(e[0]), ey = int(e[1]);
        const int points = ex * ey * (g + 1 < segments ? RS : ez - g * RS);
        for (int l = threadIdx.x; l < points; l += NT) {
          const int x = l % ex, y = (l / ex) % ey, z = l / (ex * ey);
          const tpmg_index gx = v[0] + x, gy = v[1] + y, gz = z0 + z;
          const tpmg_index gi = gx + n0 * gy + plane * gz;
          dst[gi] = inside(gx, n0) && inside(gy, n1) && inside(gz, n2) ? s1[z * S1 + y * PW + x]
                                                                       : src[gi];
        }
      }
      __syncthreads();
    }
  } else {
    constexpr int P1 = config::P1, P3 = config::P3;
    T *const s1 = shared, *const s2 = s1 + RT * P1, *const s3 = s2 + RT * P1;
    /* y: s1 = M_y w, s2 = K_y w on the owned y rows, [RT][W] */
    for (int l = threadIdx.x; l < config::G * W; l += NT) {
      const int g = l / W, x = l % W;
      const tpmg_index gx = v[0] - k + x, gy = v[1] + g * RS - k;
      const bool in_x = inside(gx, n0);
      const T *p = src + (in_x ? gx : 0);
      T col[WS], m[RS], s[RS];
#pragma unroll
      for (int y = 0; y < WS; ++y)
        col[y] = in_x && inside(gy + y, n1) ? p[n0 * (gy + y)] : T(0);
      brick_rows<k, RS, false>(M, col, m);
      brick_rows<k, RS, false>(K, col, s);
      store_line(s1 + g * RS * P1 + x, P1, m);
      store_line(s2 + g * RS * P1 + x, P1, s);
    }
    __syncthreads();
    /* x: out = c_0 K_x m + M_x (c_1 s + r m), [RT][R], r m the reaction's */
    for (int l = threadIdx.x; l < RT; l += NT) {
      T ta[W], tb[W], o[R];
      load_line(s1 + l * P1, 1, ta);
      load_line(s2 + l * P1, 1, tb);
      reaction_mass_line(mat.coefficient(1), mat.reaction(), mat.coefficient(0), tb, ta);
      brick_rows<k, R, false>(K, ta, o);
      brick_rows<k, R, true>(M, tb, o);
      store_line(s3 + l * P3, 1, o);
    }
    __syncthreads();
    const int ex = last ? int(e[0]) : R, points = ex * (last ? int(e[1]) : RT);
    for (int l = threadIdx.x; l < points; l += NT) {
      const int x = last ? l % ex : l % R, y = last ? l / ex : l / R;
      const tpmg_index gx = v[0] + x, gy = v[1] + y;
      const tpmg_index g = gx + n0 * gy;
      dst[g] = inside(gx, n0) && inside(gy, n1) ? s3[y * P3 + x] : src[g];
    }
  }
}

/* dst = A src by bricks (see the head comment); c: the level's kernel
 * parameter (level_constants). */
template <int dim, int k, typename T>
tpmg_status laplace_brick(tpmg_context *ctx, const tpmg_level *lvl, const reference_data<k, T> &c,
                          const T *src, T *dst) {
  using config = brick_config<dim, k, T>;
  brick_grid grid{};
  tpmg_index blocks = 1;
  for (int d = 0; d < 3; ++d) {
    const int cells = d == dim - 1 ? config::G * config::shape.cells_slow : config::shape.cells;
    grid.count[d] = d < dim ? (lvl->cells[d] + cells - 1) / cells : 1;
    grid.extent[d] = d < dim ? tpmg_index(cells) * k : 1;
    blocks *= grid.count[d];
  }
  if (blocks > 0x7fffffff)
    return tpmg_error_set(ctx, TPMG_ERROR_UNSUPPORTED, __FILE__, __LINE__,
                          "laplace_brick_kernel: %lld thread blocks exceed the grid limit",
                          (long long)blocks);
  auto kernel = laplace_brick_kernel<dim, k, T>;
  if (config::bytes > 48 * 1024)
    TPMG_CUDA_CALL(ctx, cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                             int(config::bytes)));
  kernel<<<dim3(unsigned(blocks)), dim3(config::threads), config::bytes, stream_of(ctx)>>>(
      *lvl, grid, src, dst, c);
  const cudaError_t error = cudaGetLastError();
  if (error != cudaSuccess)
    return cuda_error(ctx, error, "laplace_brick_kernel", __FILE__, __LINE__);
  return TPMG_SUCCESS;
}

} // namespace tpmg_cuda

#endif
