"""The integer constants of a step's source (BM, BN, BK, TM, ...), as `scripts/sass/sass.py constants
NN` evaluates them: the figures that draw a step's tiles read them from here rather than restating
them. Used by plot_tilemaps.py, plot_streamk.py and plot_smem_layouts.py; family() gives the figures of
steps 24 on (configurations of common/kernel_lib/family/) the same names."""
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent


def constants(step):
    """{name: int} for step `step` (e.g. "08"); names whose value is not an integer are left out."""
    out = subprocess.run([sys.executable, str(ROOT / "scripts" / "sass" / "sass.py"), "constants", step],
                         check=True, capture_output=True, text=True).stdout
    values = {}
    for line in out.splitlines():
        name, sep, value = line.partition(" = ")
        if sep and value.strip().lstrip("-").isdigit():
            values[name.strip()] = int(value)
    return values


def family(step):
    """{name: int} for a step of the family (24 on), under the names the standalone steps use: its
    source's own constants (SWAP_MAX_M, STEP31_PROMOTE_EVERY, ...), the tile its registration records
    (BM, BN, BK, STAGES, from kernels/steps.json), and the family's constants (common/kernel_lib/family/
    and tile_menu.hpp): WGMMA_M, WGMMA_K (32 bytes of elements: BK / 4), WGMMA_N (the tile's N),
    GROUP_M, MIN_PIECE, FIXUP_K_TILES, SWAP_BN (the widest swapped tile) and PROMOTE_EVERY (once per K
    tile unless the source's STEPnn_PROMOTE_EVERY says otherwise)."""
    sys.path.insert(0, str(ROOT / "scripts" / "sass"))
    sys.path.insert(0, str(ROOT / "scripts"))
    from sasslib.consts import read_constants  # noqa: E402
    import steps as step_table  # noqa: E402
    s = step_table.by_id(step_table.load())[step]
    lib = {}
    for rel in ("common/kernel_lib/tile_menu.hpp", "common/kernel_lib/family/config.hpp", "common/kernel_lib/family/plan.hpp"):
        lib.update({k: v for k, v in read_constants((ROOT / rel).read_text(), rel).items() if isinstance(v, int)})
    bm, bn, bk, stages = s.tile
    own = constants(step)
    return {**own, "BM": bm, "BN": bn, "BK": bk, "STAGES": stages, "WGMMA_M": lib["kWgmmaM"], "WGMMA_K": bk // 4,
            "WGMMA_N": bn, "GROUP_M": lib["kGroupM"], "MIN_PIECE": lib["kMinPiece"], "FIXUP_K_TILES": lib["kFixupKTiles"],
            "SWAP_BN": lib["kSwapMaxM"], "PROMOTE_EVERY": own.get(f"STEP{step}_PROMOTE_EVERY", bk // (bk // 4))}
