#!/usr/bin/env python3
"""Shared-memory wavefronts of the fused smoothing step, counted per thread
block: in 3D for the block-linear kernels (the constant and tiled kernels) with
the stage layouts before and after the conflict-free ones of
cuda_kernels/tpmg-cuda-tensor.cuh (see the comment before rows_index there),
in 2D for CONSTANT's team kernels.

The 2D team kernels of CONSTANT keep one layout; their stages are conflict-free
within a patch (lines start at consecutive words or an odd line length apart),
and the second table counts what warps that span several patches add.

Model: a warp instruction reads or writes element i of the lines of its active
lanes; one wavefront serves at most one distinct 4-byte word per bank (32
banks), so it takes as many wavefronts as the most distinct words any bank
holds (a double covers two banks). The ideal is ceil(active lanes x word size /
128 B). Patches of a block lie `values` words apart, lines are dealt out as in
`lines_of` (line g of the block to thread g mod A, W lines per thread), the
teams per block as `linear_config::pick`. The former fused kernel also had a
pass s1[p] = b - s1[p] over the residual (a read and a write per point); the
conflict-free one folds b into the first stage of the local solve. Standard
library only.

    python3 doc/bank-conflicts.py
"""
import math


def teams_per_block(team, values, size, W):
    """linear_config<...>::pick (cuda_kernels/tpmg-cuda-launch.cuh)."""
    team_bytes = values * size

    def threads(t):
        return (t * team + W - 1) // W

    def fill(t):
        return threads(t) / (32.0 * ((threads(t) + 31) // 32))

    by_threads = 1 if team >= 128 * W else 128 * W // team
    by_memory = 1 if team_bytes >= 48 * 1024 else 48 * 1024 // team_bytes
    plain = min(by_threads, by_memory)
    if fill(plain) >= 0.8:
        return plain
    t = plain + 1
    while threads(t) <= 256 and t * team_bytes <= 48 * 1024:
        if fill(t) >= 0.9:
            return t
        t += 1
    return plain


def wavefronts(addresses, size):
    words = {}
    for a in set(addresses):
        for w in range(size // 4):
            word = a * (size // 4) + w
            words.setdefault(word % 32, set()).add(word)
    return max((len(v) for v in words.values()), default=0)


def count(stages, teams, values, threads, size, W):
    """stages: (lines per patch, [(elements, address(line, element))])."""
    total = ideal = 0
    for lines_per_patch, accesses in stages:
        lines = teams * lines_per_patch
        active = (lines + W - 1) // W
        for w in range(W):
            for warp in range((threads + 31) // 32):
                mine = [t + w * active for t in range(32 * warp, 32 * warp + 32)
                        if t < active and t + w * active < lines]
                if not mine:
                    continue
                for elements, address in accesses:
                    for i in range(elements):
                        a = [(g // lines_per_patch) * values + address(g % lines_per_patch, i)
                             for g in mine]
                        total += wavefronts(a, size)
                        ideal += max(1, math.ceil(len(a) * size / 128))
    return total, ideal


def fused_step(k, size, W, conflict_free):
    P, R = 2 * k + 1, 2 * k - 1
    values = 2 * R * P * P
    h = values // 2  # s2 = s1 + values / 2
    teams = teams_per_block(P * P, values, size, W)
    threads = (teams * P * P + W - 1) // W
    # z stage (both versions): line y P + x writes rows at x + P y + P^2 z
    stages = [(P * P, [(R, lambda l, i: l + i * P * P), (R, lambda l, i: h + l + i * P * P)])]
    if not conflict_free:
        # y stage, line z P + x: reads [z][y][x], writes [z][y'][x] (R x R x P)
        stages.append((R * P, [
            (P, lambda l, i: (l // P) * P * P + i * P + l % P),
            (P, lambda l, i: h + (l // P) * P * P + i * P + l % P),
            (R, lambda l, i: (l // P) * R * P + l % P + i * P),
            (R, lambda l, i: h + (l // P) * R * P + l % P + i * P)]))
        # x stage, line z R + y: reads P contiguous, writes [z][y][x] (R^3)
        stages.append((R * R, [(P, lambda l, i: l * P + i), (P, lambda l, i: h + l * P + i),
                               (R, lambda l, i: l * R + i)]))
        z = lambda l, i: l + i * R * R
        y = lambda l, i: (l // R) * R * R + l % R + i * R
        x = lambda l, i: l * R + i
        fd = [z, z, y, y, x, x, y, y, z]  # load / store per stage, in place
    else:
        # x stage, line z P + y: reads P contiguous, writes y + P z + P R x
        stages.append((R * P, [(P, lambda l, i: l * P + i), (P, lambda l, i: h + l * P + i),
                               (R, lambda l, i: l + i * P * R),
                               (R, lambda l, i: h + l + i * P * R)]))
        # y stage, line x R + z: reads P contiguous, writes z + R x + R^2 y
        stages.append((R * R, [(P, lambda l, i: l * P + i), (P, lambda l, i: h + l * P + i),
                               (R, lambda l, i: l + i * R * R)]))
        a_line = lambda l, i: l * R + i       # A, z lines
        a_rank = lambda l, i: l + i * R * R   # A, y lines
        b_line = lambda l, i: h + l * R + i   # B, y lines
        b_rank = lambda l, i: h + l + i * R * R  # B, x lines
        fd = [a_line, a_line, a_rank, b_line, b_rank, b_rank, b_line, a_rank, a_line]
    stages.append((R * R, [(R, f) for f in fd]))
    total, ideal = count(stages, teams, values, threads, size, W)
    if not conflict_free:  # s1[p] = b - s1[p], p = thread, thread + block size, ...
        for first in range(0, teams * R ** 3, threads):
            for warp in range(first, min(first + threads, teams * R ** 3), 32):
                a = [(p // R ** 3) * values + p % R ** 3
                     for p in range(warp, min(warp + 32, first + threads, teams * R ** 3))]
                total += 2 * wavefronts(a, size)
                ideal += 2 * max(1, math.ceil(len(a) * size / 128))
    return (total, ideal), teams


def team_fused_step_2d(k, size, gap):
    """The 2D team kernel of CONSTANT (patch_fused_kernel): a team of P threads
    per patch, teams = 128 // P per block, patch j's tensors at j (values +
    gap), the warps taking the block's threads in order (thread x of team j is
    j P + x)."""
    P, R = 2 * k + 1, 2 * k - 1
    h = R * P
    values = 2 * h + gap
    teams = min(128 // P, 48 * 1024 // (2 * h * size))
    total = ideal = 0

    def access(active, address):
        nonlocal total, ideal
        for warp in range(0, teams * P, 32):
            a = [(t // P) * values + address(t % P) for t in range(warp, min(warp + 32, teams * P))
                 if t % P < active and address(t % P) is not None]
            if a:
                total += wavefronts(a, size)
                ideal += max(1, math.ceil(len(a) * size / 128))

    for r in range(R):  # y stage: column x, rows r at x + P r (s1 and s2)
        access(P, lambda x: x + r * P)
        access(P, lambda x: h + x + r * P)
    for i in range(P):  # x stage: row y read at y P + i (s1 and s2)
        access(R, lambda y: y * P + i)
        access(R, lambda y: h + y * P + i)
    for i in range(R):  # ... written at y R + i
        access(R, lambda y: y * R + i)
    for first in range(0, R * R, P):  # b - s1, read and written
        for _ in range(2):
            access(P, lambda x: first + x if first + x < R * R else None)
    for i in range(R):  # solve: columns (load, store), rows (load, store), columns
        for address in (lambda x: x + i * R,) * 2 + (lambda x: x * R + i,) * 2 + (lambda x: x + i * R,):
            access(R, address)
    return total, ideal, teams


def main():
    print("3D fused step, shared-memory wavefronts per block: measured / ideal")
    print("(ideal: no bank conflicts), former stages -> conflict-free stages")
    for size, name in ((4, "float"), (8, "double")):
        for W, kernel in ((1, "CONSTANT (linear)"), (2, "TILED")):
            print(f"\n{name}, {kernel}")
            print("  k  patches/block  former          conflict-free   wavefronts new/old")
            for k in range(2, 9):
                (old, old_ideal), teams = fused_step(k, size, W, False)
                (new, new_ideal), _ = fused_step(k, size, W, True)
                print(f"  {k}  {teams:13d}  {old:5d} ({old / old_ideal:.2f}x)  "
                      f"{new:5d} ({new / new_ideal:.2f}x)  {new / old:.2f}")
    print("\n2D fused step, CONSTANT's team kernels: wavefronts per block as built")
    print("(no gap between the patches' tensors) -> with the best gap of 0..31 words")
    print("(measured on the H200 with these gaps: -0.3% to +1.1%, so not kept)")
    print("  k  patches/block  float                       double")
    for k in range(2, 11):
        cells = []
        for size in (4, 8):
            old, ideal, teams = team_fused_step_2d(k, size, 0)
            new, gap = min((team_fused_step_2d(k, size, g)[0], g) for g in range(32))
            cells.append(f"{old:5d} ({old / ideal:.2f}x) -> {new / ideal:.2f}x, gap {gap:2d}")
        print(f"  {k:2d} {teams:13d}  {cells[0]}   {cells[1]}")


if __name__ == "__main__":
    main()
