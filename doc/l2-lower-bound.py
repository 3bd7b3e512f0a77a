#!/usr/bin/env python3
"""Lower bound for the L2 error of ANY continuous Q_k function on a uniform
mesh of [0,1]^3 (n cells per direction) against u = sin(pi x) sin(pi y) sin(pi z).

The continuous Q_k space is a subspace of the discontinuous one, whose best
L2 approximation of u is, cell by cell, the tensor product P (x) P (x) P of the
1D L2 projections onto polynomials of degree k. With ||sin(pi .)||^2 = 1/2 and
e = ||sin(pi .) - P sin(pi .)|| in 1D:
    ||u - (P(x)P(x)P) u||^2 = (1/2)^3 - (1/2 - e^2)^3 = e^2 (3/4 - 3 e^2 / 2 + e^4).
No finite element solution can have a smaller L2 error. The sums run in
double, so values below about 1e-15 are this script's own rounding: scale
those from a coarser mesh by h^(k+1). Standard library only.

    python3 doc/l2-lower-bound.py
"""
import math


def legendre(n, x):
    p0, p1 = 1.0, x
    if n == 0:
        return 1.0
    for m in range(1, n):
        p0, p1 = p1, ((2 * m + 1) * x * p1 - m * p0) / (m + 1)
    return p1


def gauss(n):
    """Gauss-Legendre points and weights on [-1, 1] by Newton's method."""
    points, weights = [], []
    for i in range(n):
        x = math.cos(math.pi * (i + 0.75) / (n + 0.5))
        for _ in range(100):
            p = legendre(n, x)
            dp = n * (x * p - legendre(n - 1, x)) / (x * x - 1)
            x -= p / dp
        p = legendre(n, x)
        dp = n * (x * p - legendre(n - 1, x)) / (x * x - 1)
        points.append(x)
        weights.append(2 / ((1 - x * x) * dp * dp))
    return points, weights


def projection_error_1d(k, n):
    """||sin(pi x) - P_k sin(pi x)|| over [0,1] with n cells, P_k per cell."""
    xq, wq = gauss(k + 10)
    h, total = 1.0 / n, 0.0
    for c in range(n):
        f = [math.sin(math.pi * (c * h + (x + 1) / 2 * h)) for x in xq]
        r = f[:]
        for j in range(k + 1):
            pj = [legendre(j, x) for x in xq]
            coefficient = sum(fi * p * w for fi, p, w in zip(f, pj, wq)) / (2 / (2 * j + 1))
            r = [ri - coefficient * p for ri, p in zip(r, pj)]
        total += sum(ri * ri * w for ri, w in zip(r, wq)) * h / 2
    return math.sqrt(total)


if __name__ == "__main__":
    print("  k  cells   1D error    3D lower bound")
    for k, n in [(1, 64), (1, 512), (3, 16), (3, 256), (7, 4), (7, 8)]:
        e = projection_error_1d(k, n)
        # (1/2)^3 - (1/2 - e^2)^3, expanded to avoid cancellation
        bound = e * math.sqrt(0.75 - 1.5 * e * e + e ** 4)
        print(f"{k:3d} {n:6d}  {e:10.3e}  {bound:12.3e}")
