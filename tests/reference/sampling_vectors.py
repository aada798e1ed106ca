#!/usr/bin/env python3
"""Writes tests/data/sampling_vectors.jsonl: frame indices computed with each harness's own
formula (docs/formats.md §4, docs/measures.md §15), for tests/sampling.rs to compare with
src/core/sampling.rs.

Python 3.11 + numpy. Usage: python3 tests/reference/sampling_vectors.py [OUT]

Each function below copies its harness's expression literally (same operand order, Python
int/float semantics, numpy where the harness uses numpy), so that the vectors are what the
harness would have sampled, not what the Rust port thinks it samples. One JSON line per case:
  {"policy", "t", "n", "video_fps"?, "fps"?, "base"?, "indices": [...]}
For policy "fps" the count follows from the video's duration; "n" is then the number of
indices the harness produced (informational: the Rust side ignores it and checks the length).
Only cases where the harness itself returns indices of a real video are written: T >= 1, and
no N = 0 for segment_mid (the harness divides by zero there).
"""

import json
import os
import sys

import numpy as np


def linspace(T, N):
    # lmms-eval (LLaVA-OneVision and most wrappers)
    return np.linspace(0, T - 1, N, dtype=int).tolist()


def interior(T, N):
    # VLMEvalKit VideoBaseDataset.save_video_frames, nframe mode (len(vid) == T)
    step_size = T / (N + 1)
    return [int(i * step_size) for i in range(1, N + 1)]


def fps_mode(T, video_fps, fps):
    # VLMEvalKit VideoBaseDataset.save_video_frames, fps mode
    total_frames = T
    total_duration = total_frames / video_fps
    required_frames = int(total_duration * fps)
    step_size = video_fps / fps
    return [int(i * step_size) for i in range(required_frames)]


def segment_mid(T, N):
    # InternVL / MVBench get_index(bound=None, max_frame=T-1, first_idx=0, num_segments=N)
    start_idx, end_idx = 0, T - 1
    seg_size = float(end_idx - start_idx) / N
    return [int(start_idx + (seg_size / 2) + np.round(seg_size * idx)) for idx in range(N)]


def uniform_round(T, N):
    # docs/measures.md §15; Python's round() is half to even
    if N == 0:
        return []
    if N >= T:
        return list(range(T))
    if N == 1:
        return [0]
    return sorted({min(T - 1, round(i * (T - 1) / (N - 1))) for i in range(N)})


def dense_start(T, N):
    # docs/measures.md §15
    if N == 0:
        return []
    if N >= T:
        return list(range(T))
    if N == 1:
        return [0]
    E = max(N - 1, (T - 1) // 3)
    return sorted({min(E, round(i * E / (N - 1))) for i in range(N)})


def nested(T, N, base):
    # docs/formats.md §4: every (base/N)-th element of the base linspace grid
    assert base % N == 0
    G = np.linspace(0, T - 1, base, dtype=int).tolist()
    out = G[:: base // N]
    assert len(out) == N
    return out


FIXED = {
    "linspace": linspace,
    "interior": interior,
    "segment_mid": segment_mid,
    "uniform_round": uniform_round,
    "dense_start": dense_start,
}


def divisors(b):
    return [d for d in range(1, b + 1) if b % d == 0]


def cases():
    # Every small video with every small budget, N > T included.
    for policy, f in FIXED.items():
        for T in range(1, 41):
            for N in range(1, 51):
                yield {"policy": policy, "t": T, "n": N, "indices": f(T, N)}
        # A zero-frame budget, where the harness returns no index (not segment_mid: the
        # harness divides by zero).
        if policy != "segment_mid":
            for T in (1, 10, 1000):
                yield {"policy": policy, "t": T, "n": 0, "indices": f(T, 0)}
    # Long videos, thinned so that the file stays small: the widest budgets only on a few.
    large_t = [64, 100, 181, 1000, 1800, 5400, 10007, 54000, 100000]
    for policy, f in FIXED.items():
        for T in large_t:
            budgets = [1, 2, 3, 7, 8, 16, 31, 32, 64, 100, 128]
            if T in (64, 100, 5400, 100000):
                budgets += [256, 512]
            for N in budgets:
                yield {"policy": policy, "t": T, "n": N, "indices": f(T, N)}
    # Nested grids: every divisor of a few bases, small and large videos.
    for T in range(1, 41):
        for base in (1, 12, 16, 48):
            for N in divisors(base):
                yield {"policy": "nested", "t": T, "n": N, "base": base,
                       "indices": nested(T, N, base)}
    for T in (1000, 5400, 100000):
        for base in (384, 512):
            for N in divisors(base):
                if N <= 128 or T == 5400:
                    yield {"policy": "nested", "t": T, "n": N, "base": base,
                           "indices": nested(T, N, base)}
    # fps mode: NTSC and PAL rates, and a 1 fps frame cache (where rate 2 repeats frames);
    # long videos only at the lowest rates, for size.
    for video_fps in (23.976, 29.97, 30.0, 25.0, 1.0):
        for fps in (0.5, 1.0, 2.0):
            ts = list(range(1, 41)) + list(range(41, 1000, 53))
            if video_fps > 1.0:
                ts += [1798, 1799, 1800, 1801]
                if fps == 0.5:
                    ts += [5400, 17982, 100000]
            for T in ts:
                idx = fps_mode(T, video_fps, fps)
                yield {"policy": "fps", "t": T, "n": len(idx), "video_fps": video_fps,
                       "fps": fps, "indices": idx}
    # decord's NTSC rate, where the harness's order (step first, then i * step) gives 5999 at
    # i = 1001 while i * video_fps / fps would give 6000.
    video_fps = 30000 / 1001
    for T in (6006, 6007):
        idx = fps_mode(T, video_fps, 5.0)
        yield {"policy": "fps", "t": T, "n": len(idx), "video_fps": video_fps, "fps": 5.0,
               "indices": idx}

def main():
    here = os.path.dirname(os.path.abspath(__file__))
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        here, "..", "data", "sampling_vectors.jsonl")
    n = 0
    with open(out, "w") as fh:
        for c in cases():
            fh.write(json.dumps(c, separators=(",", ":")) + "\n")
            n += 1
    print(f"{n} cases -> {os.path.normpath(out)} ({os.path.getsize(out)} bytes)")


if __name__ == "__main__":
    main()
