// Stream-K for a persistent kernel (steps 21 and 23; Osama et al., "Stream-K: Work-centric Parallel
// Decomposition for Dense Matrix-Matrix Multiplication on the GPU", PPoPP 2023, its "data-parallel +
// stream-K" hybrid). The first dp_tiles tiles (in the step's tile order) are data-parallel: block b of
// P runs tiles b, b + P, ... whole. The K tiles of the other sk_tiles tiles, iters = sk_tiles * k_tiles
// of them, are shared out evenly: block b takes [start(b), start(b + 1)), start(b) = b * iters / P,
// crossing tile boundaries; each stretch of that range inside one tile is a Piece. Whether and how much
// to split is the step's rule (its make_split, the lesson of each step); the arithmetic that follows
// from the rule is here, the same on host and device. Step 09b teaches the idea first, inline, with
// two kernels.
// The workspace (Step::workspace_bytes, allocated and zeroed by the harness): 2P slots of one tile's
// fp32 partial sums (slot 2b + 1 for the piece block b starts at a tile's K tile 0, slot 2b for the
// piece it starts inside a tile), then the arrival counters, zero between launches.
#pragma once
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <string>

#include "check.hpp"
#include "host_device.hpp"

namespace gemm::stream_k {

/// The split of one launch, passed to the kernel by value. blocks: P, the grid.
struct Split {
  int tiles, dp_tiles, sk_tiles, blocks;  // blocks: P, the grid
  int64_t iters;                           // sk_tiles * k_tiles
  float4* partials;  // 2P slots of one tile's fp32 partials, laid out as the step stores them
  int* arrivals;     // pieces counted so far, per stream-K tile (and consumer, where the step says so); 0 between launches
  GEMM_HD int64_t start(int b) const { return int64_t(b) * iters / blocks; }
  GEMM_HD int block_of(int64_t x) const { return int(((x + 1) * blocks - 1) / iters); }  // max c: start(c) <= x
};

/// The split once the step's rule has decided (host). tiles and k_tiles: the problem's; worth_it:
/// the rule's verdict. Not worth it: no stream-K, min(tiles, sms) blocks. With fewer tiles than SMs:
/// all tiles are shared out, on up to `sms` blocks of at least `min_piece` K tiles each (none when
/// that leaves no more blocks than tiles). Otherwise stream-K takes the partial wave's tiles, plus one
/// full wave when the partial one is under half full (every stream-K block then gets at least half a
/// tile of K, rounded down: none at k_tiles = 1, where every piece is a whole tile; and no tile is
/// split between more than three blocks), on `sms` blocks.
inline Split make_split(int64_t tiles, int64_t k_tiles, int sms, bool worth_it, int min_piece) {
  Split s{};
  s.tiles = int(tiles);
  const int64_t waves = tiles / sms, rest = tiles % sms;
  if (!worth_it) {
    s.sk_tiles = 0;
    s.blocks = int(std::min<int64_t>(tiles, sms));
  } else if (waves == 0) {
    const int64_t p = std::min<int64_t>(sms, tiles * k_tiles / min_piece);
    s.sk_tiles = p > tiles ? int(tiles) : 0;
    s.blocks = int(std::max<int64_t>(p, tiles));
  } else {
    s.sk_tiles = rest == 0 ? 0 : int(2 * rest >= sms ? rest : rest + sms);
    s.blocks = sms;
  }
  s.dp_tiles = s.tiles - s.sk_tiles;
  s.iters = int64_t(s.sk_tiles) * k_tiles;
  return s;
}

/// Split-K in equal segments (step 26 on): every tile stream-K, cut into `s` equal K segments, one
/// block each, so tiles x s blocks and block b's range [b * k_tiles / s, ...) of iters is segment
/// b % s of tile b / s (start() and Walk need nothing else). Every block starts at a segment boundary,
/// so the blocks of one segment walk K in step (the L2 sharing of whole tiles). s >= 2 and
/// tiles * s blocks < 2^31 are the caller's (tile_menu::split_factor keeps s <= sms / tiles).
inline Split make_split_k(int64_t tiles, int64_t k_tiles, int64_t s) {
  Split sp{};
  sp.tiles = sp.sk_tiles = int(tiles);
  sp.dp_tiles = 0;
  sp.blocks = int(tiles * s);
  sp.iters = tiles * k_tiles;
  return sp;
}

/// Bytes of the 2P partial slots of `slot_floats` fp32 each.
inline size_t slots_bytes(const Split& s, int64_t slot_floats) {
  return size_t(2) * s.blocks * slot_floats * sizeof(float);
}
/// The workspace the split needs: the slots and `counters_per_tile` ints per stream-K tile; 0 when
/// nothing is split.
inline size_t workspace_bytes(const Split& s, int64_t slot_floats, int counters_per_tile) {
  return s.sk_tiles == 0 ? 0 : slots_bytes(s, slot_floats) + size_t(s.sk_tiles) * counters_per_tile * sizeof(int);
}

/// Points s.partials and s.arrivals into the harness's workspace (`bytes` of it at `workspace`).
/// Throws gemm::Error naming both sizes when it is smaller than workspace_bytes(s, ...).
inline void attach_workspace(Split& s, void* workspace, size_t bytes, int64_t slot_floats, int counters_per_tile,
                             const char* step, int m, int n, int k) {
  const size_t need = workspace_bytes(s, slot_floats, counters_per_tile);
  if (bytes < need)
    throw Error(std::string("step ") + step + " needs a workspace of " + std::to_string(need) + " bytes for M=" +
                std::to_string(m) + " N=" + std::to_string(n) + " K=" + std::to_string(k) + " (got " +
                std::to_string(bytes) + "): reserve Step::workspace_bytes first");
  if (s.sk_tiles > 0) {
    s.partials = static_cast<float4*>(workspace);
    s.arrivals = reinterpret_cast<int*>(static_cast<char*>(workspace) + slots_bytes(s, slot_floats));
  }
}

/// One piece of a block's work: K tiles [kt0, kt1) of tile t (the step's tile-order index).
struct Piece {
  int t, kt0, kt1;
};

#ifdef __CUDACC__
/// Walks this block's stream-K range, after its data-parallel tiles. Every role that walks the tiles
/// (producer, consumers) keeps one and calls next() in the same order, so they see the same pieces.
struct Walk {
  int k_tiles, dp_tiles;
  int64_t x, end;  // the next K tile (of iters) and the end of this block's range
  __device__ Walk(const Split& s, int k_tiles_)
      : k_tiles(k_tiles_), dp_tiles(s.dp_tiles), x(s.start(blockIdx.x)), end(s.start(blockIdx.x + 1)) {}
  /// Unit b's range: a kernel whose units of the split are not blocks (a cluster, the family's).
  __device__ Walk(const Split& s, int k_tiles_, int b)
      : k_tiles(k_tiles_), dp_tiles(s.dp_tiles), x(s.start(b)), end(s.start(b + 1)) {}
  __device__ bool next(Piece& p) {
    if (x >= end) return false;
    const int tile = int(x / k_tiles), kt0 = int(x - int64_t(tile) * k_tiles);
    const int kt1 = int(std::min<int64_t>(k_tiles, kt0 + (end - x)));
    p = {dp_tiles + tile, kt0, kt1};
    x += kt1 - kt0;
    return true;
  }
};
#endif

}  // namespace gemm::stream_k
