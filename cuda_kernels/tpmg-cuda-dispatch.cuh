/* The CUDA backend's one dispatch table: which kernel runs the level operator
 * and the smoother for a variant of the backend's name, a dimension, degree
 * and precision; and the dispatch from the run-time degree, precision and
 * variant to a compile-time kernel. The kernels:
 *   basic     a thread team per patch (per vertex for the operator), the
 *             level's 1D matrices read from device memory
 *   constant  the unit patch's 1D matrices in the kernel parameters (constant
 *             bank); team kernels or block-linear ones by dimension and degree
 *             (linear_smoother, linear_operator)
 *   tiled     constant with tiled_lines lines per thread (register tiling)
 *   thread    one thread per patch or operator row, degree 1 only
 *   brick     the operator by bricks of cells (tpmg-cuda-brick.cuh) */
#ifndef TPMG_CUDA_DISPATCH_CUH
#define TPMG_CUDA_DISPATCH_CUH

#include "tpmg-cuda.cuh"

namespace tpmg_cuda {

enum class kernel_kind { basic, constant, tiled, thread, brick };

template <kernel_kind K> using kernel_constant = std::integral_constant<kernel_kind, K>;

inline const char *kernel_name(kernel_kind kern) {
  switch (kern) {
  case kernel_kind::basic:
    return "basic";
  case kernel_kind::constant:
    return "constant";
  case kernel_kind::tiled:
    return "tiled";
  case kernel_kind::thread:
    return "thread";
  case kernel_kind::brick:
    return "brick";
  }
  return "unknown";
}

/* What the plain name "cuda" (variant::fastest) runs: the fastest kernel
 * measured on the H200 (doc/benchmarks.md), for the smoother (by its fused
 * step) and the operator. Smoother: TILED where it beat CONSTANT by more than 1% in the same
 * run (the medians repeat within 0.2%): in 3D in float for k = 2, 3, 4 (with
 * the conflict-free layouts; 3D fused step, 5e7 DoFs, GDoF/s: 16.2 / 16.1 /
 * 14.2 against 14.4 / 15.5 / 13.7). At higher degrees two lines per thread
 * double the registers (3D Q7 float fused: 115 instead of 64) and halve the
 * warps per SM, which costs more than the halved constant-bank loads save; in
 * double TILED no longer wins at k = 2 (11.5 against 11.6).
 * Operator: BRICK (tpmg-cuda-brick.cuh) wherever it beat the former default
 * (THREAD for k = 1, TILED or CONSTANT) by more than 1% in the same run, which
 * is everywhere but 2D double Q9 (BRICK 51.2, TILED 53.5 GDoF/s; TILED stays).
 * tpmg-bench --dofs 5e7 --repeat 10, GDoF/s, k = 1..8 (2D 1..10), BRICK
 * against the former default, one run each:
 *   3D double  93 87 73 63 58 45 34 25      against 55 22 26 30 29 26 25 19
 *   3D float  134 113 112 91 76 69 65 51    against 59 23 29 31 31 29 30 29
 *   2D double 142 145 123 120 106 114 92 72 51 43  against 134 63 73 78 79 79
 *             75 63 54 35
 *   2D float  207 192 165 160 139 142 129 115 105 87  against 141 68 79 85 87
 *             86 85 83 76 78
 * 3D BRICK since it marches along z (the kernel alone, median of 10 launches
 * on 5e7 DoFs, against the BRICK above in the same run):
 *   3D double 102 87 78 69 61 63 44 39      against 86 85 71 62 56 44 34 25
 *   3D float  126 121 119 96 85 79 76 72    against 131 111 110 89 76 68 64 50 */
template <int dim, int k, typename T> constexpr kernel_kind fastest_smoother() {
  if (k == 1)
    return kernel_kind::thread;
  return dim == 3 && k <= 4 && sizeof(T) == 4 ? kernel_kind::tiled : kernel_kind::constant;
}
template <int dim, int k, typename T> constexpr kernel_kind fastest_operator() {
  return dim == 2 && k == 9 && sizeof(T) == 8 ? kernel_kind::tiled : kernel_kind::brick;
}

/* The table: the kernel of `use` (operator or smoother) for a variant. A named
 * variant runs its kernel for both; "brick" is the operator's alone and leaves
 * the smoother to the fastest. */
template <int dim, int k, typename T>
constexpr kernel_kind kernel_for(variant v, tpmg_level_use use) {
  switch (v) {
  case variant::basic:
    return kernel_kind::basic;
  case variant::constant:
    return kernel_kind::constant;
  case variant::tiled:
    return kernel_kind::tiled;
  case variant::thread:
    return kernel_kind::thread;
  case variant::brick:
    return use == TPMG_USE_OPERATOR ? kernel_kind::brick : fastest_smoother<dim, k, T>();
  case variant::fastest:
    break;
  }
  return use == TPMG_USE_OPERATOR ? fastest_operator<dim, k, T>() : fastest_smoother<dim, k, T>();
}

/* Whether `kern` exists for degree k: thread for degree 1 only. */
constexpr bool kernel_exists(kernel_kind kern, int k) {
  return kern != kernel_kind::thread || k == 1;
}

inline tpmg_status missing_kernel(const tpmg_context *ctx, kernel_kind kern, int dim, int degree) {
  return tpmg_error_set(ctx, TPMG_ERROR_UNSUPPORTED, __FILE__, __LINE__,
                        "CUDA backend: the %s kernels exist for degree 1 only, not %dD Q%d",
                        kernel_name(kern), dim, degree);
}

/* The kernel the context runs for `use` on a level of dimension dim, degree
 * and precision, without instantiating any (check_level, the work counts);
 * TPMG_ERROR_UNSUPPORTED where it does not exist. */
template <int dim>
tpmg_status kernel_of(const tpmg_context *ctx, int degree, tpmg_precision prec, tpmg_level_use use,
                      kernel_kind *kern) {
  const variant v = variant_of(ctx);
  return select<dim>(ctx, degree, prec, [&](auto K, auto zero) -> tpmg_status {
    constexpr int k = decltype(K)::value;
    *kern = kernel_for<dim, k, decltype(zero)>(v, use);
    return kernel_exists(*kern, k) ? TPMG_SUCCESS : missing_kernel(ctx, *kern, dim, k);
  });
}

/* Call f(std::integral_constant<int, k>, T(), kernel_constant<kern>) for the
 * run-time degree and precision and the kernel of the context's variant for
 * `use` (deal.II's select_apply_inverse, one level further): f is
 * instantiated only for kernels that exist for (use, k). */
template <int dim, tpmg_level_use use, typename F>
tpmg_status dispatch(tpmg_context *ctx, int degree, tpmg_precision prec, F &&f) {
  const variant v = variant_of(ctx);
  return select<dim>(ctx, degree, prec, [&](auto K, auto zero) -> tpmg_status {
    constexpr int k = decltype(K)::value;
    const kernel_kind kern = kernel_for<dim, k, decltype(zero)>(v, use);
    switch (kern) {
    case kernel_kind::basic:
      return f(K, zero, kernel_constant<kernel_kind::basic>{});
    case kernel_kind::constant:
      return f(K, zero, kernel_constant<kernel_kind::constant>{});
    case kernel_kind::tiled:
      return f(K, zero, kernel_constant<kernel_kind::tiled>{});
    case kernel_kind::thread:
      if constexpr (k == 1)
        return f(K, zero, kernel_constant<kernel_kind::thread>{});
      break;
    case kernel_kind::brick:
      if constexpr (use == TPMG_USE_OPERATOR)
        return f(K, zero, kernel_constant<kernel_kind::brick>{});
      break;
    }
    return missing_kernel(ctx, kern, dim, k);
  });
}

} // namespace tpmg_cuda

#endif
