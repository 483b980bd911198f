"""The integer constants of a step's source (BM, BN, BK, TM, ...), as `scripts/sass/sass.py constants
NN` evaluates them: the figures that draw a step's tiles read them from here rather than restating
them. Used by plot_tilemaps.py, plot_streamk.py and plot_smem_layouts.py; family() gives the figures of
steps 24 on (configurations of common/kernel_lib/family/) the same names."""
import pathlib
import re
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


# ---- The family's configurations as the kernels spell them (figures of steps 24 on) ----------------------
CONFIG_HPP = "common/kernel_lib/family/config.hpp"
MENU_HPP = "common/kernel_lib/family/menu.hpp"


def _strip(text):
    sys.path.insert(0, str(ROOT / "scripts" / "sass"))
    from sasslib.consts import strip_comments  # noqa: E402
    return strip_comments(text)


def _split_top(body):
    sys.path.insert(0, str(ROOT / "scripts" / "sass"))
    from sasslib.consts import split_top  # noqa: E402
    return [p.strip() for p in split_top(body) if p.strip()]


def struct_fields(rel, struct):
    """The fields of `struct STRUCT { ... };` in the header `rel` (relative to the repository), in
    declaration order: [(name, C++ type, default as written, its ///< comment or "")]; every field must
    have a default (`type name = value;`), as the family's Spec and SplitPolicy do."""
    text = (ROOT / rel).read_text()
    m = re.search(r"struct " + struct + r" \{(.*?)\n\};", text, re.S)
    if not m:
        raise SystemExit(f"error: no `struct {struct} {{ ... }};` in {rel}")
    fields = []
    for line in m.group(1).splitlines():
        d = re.match(r"\s*([\w:]+)\s+(\w+)\s*=\s*([^;]+);\s*(?:///<\s*(.*))?$", line)
        if d:
            fields.append((d.group(2), d.group(1), _value(d.group(3)), (d.group(4) or "").strip()))
        elif re.match(r"\s*[\w:]+\s+\w+\s*[;{]", line) and "(" not in line:
            raise SystemExit(f"error: {rel}: a field of {struct} without a default: `{line.strip()}`")
    if not fields:
        raise SystemExit(f"error: no fields read from struct {struct} in {rel}")
    return fields


def spec_fields():
    """The fields of the family's configuration, `struct Spec` in common/kernel_lib/family/config.hpp."""
    return struct_fields(CONFIG_HPP, "Spec")


def _value(expr, macros=None):
    """A Spec field's value as the figures print it: Elem::e4m3 -> "e4m3", a build-time macro -> its
    default (STEP35_CLUSTER_M -> "1"), anything else as written."""
    expr = " ".join(expr.split())
    if re.fullmatch(r"(?:\w+::)*\w+::(\w+)", expr) and not expr[0].isdigit():
        return expr.rsplit("::", 1)[1]
    if macros and expr in macros:
        return str(macros[expr])
    return expr


def spec_defaults():
    """{field: default} of struct Spec: step 23's configuration, which every step of the family varies."""
    return {name: default for name, _, default, _ in spec_fields()}


CONFIG_RE = re.compile(r"(?:template\s*<\s*int\s+(?P<param>\w+)\s*>\s*)?struct\s+(?P<name>\w+)\s*:\s*fam::Config<\s*"
                       r"(?P<fit>fam::menu::fit\(\s*)?(?:fam::Spec)?\{(?P<body>[^{}]*)\}\s*\)?\s*>\s*\{\s*\}\s*;", re.S)


def configurations(step):
    """The configurations step `step` (24 on) names, as its source spells them: [{"name": "Swapped",
    "fields": {field: value} (only those it sets), "fit": True where the stages are menu::fit's (the most
    that fit), "param": the template parameter (e.g. "TN") or None, "param_values": the values the source
    instantiates it with (Swapped<8>, ...)}], in source order. A step with none
    (29: the menu) gives []."""
    src = next((ROOT / "kernels").glob(f"{step}_*.cu"))
    text = _strip(src.read_text())
    macros = constants(step)
    out = []
    for m in CONFIG_RE.finditer(text):
        fields = {}
        for item in _split_top(m.group("body")):
            d = re.fullmatch(r"\.(\w+)\s*=\s*(.+)", item, re.S)
            if not d:
                raise SystemExit(f"error: {src.name}: cannot read `{item}` in {m.group('name')}'s Spec")
            fields[d.group(1)] = _value(d.group(2), macros)
        values = sorted({int(v) for v in re.findall(m.group("name") + r"<(\d+)>", text)}) if m.group("param") else []
        out.append({"name": m.group("name"), "fields": fields, "fit": bool(m.group("fit")), "param": m.group("param"),
                    "param_values": values})
    unknown = {f for c in out for f in c["fields"]} - set(spec_defaults())
    if unknown:
        raise SystemExit(f"error: {src.name} sets {', '.join(sorted(unknown))}, not fields of {CONFIG_HPP}'s Spec")
    return out


def menu_awaiting(which="kAwaitingTuneH200"):
    """The names in one of menu.hpp's lists of entries a table lacks: kAwaitingTune (no table has them)
    or kAwaitingTuneH200 (the H100's has, the H200's not), in their order."""
    text = _strip((ROOT / MENU_HPP).read_text())
    m = re.search(r"std::array<const char\*,\s*(\d+)>\s*" + which + r"\s*=\s*\{(.*?)\};", text, re.S)
    if not m:
        raise SystemExit(f"error: no {which} = {{ ... }}; in {MENU_HPP}")
    names = re.findall(r'"([^"]+)"', m.group(2))
    if len(names) != int(m.group(1)):
        raise SystemExit(f"error: {MENU_HPP}: {which} declares {m.group(1)} names and lists {len(names)}")
    return names


def menu_entries():
    """The bf16 menu of step 29 (menu::kBf16 in common/kernel_lib/family/menu.hpp): [{field: value} of
    the fields each entry sets; "swap" and "bn" for swapped(bn), and "swap" beside the fields of
    wide_swapped({...})], in menu order."""
    text = _strip((ROOT / MENU_HPP).read_text())
    m = re.search(r"kBf16\s*=\s*\{(.*?)\n\};", text, re.S)
    if not m:
        raise SystemExit(f"error: no kBf16 = {{ ... }}; in {MENU_HPP}")
    aliases = dict(re.findall(r"\b(k\w+)\s*=\s*\w+::(\w+)", text))  # kPP = Consumers::pingpong, ...
    entries = []
    for item in _split_top(m.group(1)):
        t = re.fullmatch(r"(tile|wide_swapped)\(\{(.*)\}\)", item, re.S)
        s = re.fullmatch(r"swapped\((\d+)\)", item)
        if t:
            fields = {}
            for f in _split_top(t.group(2)):
                d = re.fullmatch(r"\.(\w+)\s*=\s*(.+)", f, re.S)
                fields[d.group(1)] = _value(d.group(2), aliases)
            if t.group(1) == "wide_swapped":
                fields["swap"] = "true"
            entries.append(fields)
        elif s:
            entries.append({"bn": s.group(1), "swap": "true"})
        else:
            raise SystemExit(f"error: {MENU_HPP}: cannot read menu entry `{item}`")
    return entries


def _function_body(text, signature):
    """The text between the braces of the first function whose declaration matches `signature` (a regex)."""
    m = re.search(signature + r"[^{;]*\{", text)
    if not m:
        return None
    depth, i = 1, m.end()
    while depth and i < len(text):
        depth += {"{": 1, "}": -1}.get(text[i], 0)
        i += 1
    return text[m.end():i - 1]


def plan_policy(step):
    """What step `step`'s policy (its `fam::Plan plan(m, n, k, sms)`) passes the family's make_plan, as
    written: {"spec": the configuration argument, "split": the SplitPolicy initializer, "pad": the padded-
    copy flag}, a local named there replaced by the expression it was given (a build-time macro's
    condition resolved to its default's branch). A step that picks by measurement (29) adds "pick": the
    dispatch call, and its make_plan is that of the hand rule it falls back to (menu::hand_plan, in
    family/menu.hpp)."""
    src = next((ROOT / "kernels").glob(f"{step}_*.cu"))
    text = _strip(src.read_text())
    macros = constants(step)
    body = _function_body(text, r"fam::Plan\s+plan\s*\(")
    if body is None:
        raise SystemExit(f"error: {src.name}: no `fam::Plan plan(...)`")
    out = {}
    pick = re.search(r"(fam::dispatch::pick)\(", body)
    if pick:
        out["pick"] = pick.group(1)
        menu_text = _strip((ROOT / "common" / "kernel_lib" / "family" / "menu.hpp").read_text())
        body = _function_body(menu_text, r"inline\s+Plan\s+hand_plan\s*\(") or body
    call = re.search(r"make_plan\((.*?)\);", body, re.S)
    if not call:
        raise SystemExit(f"error: {src.name}: plan() calls no make_plan")
    args = _split_top(call.group(1))
    locals_ = {m.group(1): " ".join(m.group(2).split())
               for m in re.finditer(r"const\s+[\w:]+\s+(\w+)\s*=\s*(.*?);", body, re.S)}

    def expand(expr):
        expr = " ".join(expr.split())
        if expr in locals_:
            expr = locals_[expr]
        c = re.fullmatch(r"(\w+) \? (.*?) : (.*)", expr)
        if c and c.group(1) in macros:  # STEP28_ALWAYS_REPACK ? a : b, at the step's own build
            expr = c.group(2) if macros[c.group(1)] else c.group(3)
        elif c and c.group(1) in locals_:  # swap ? Swapped::spec : Wide::spec, with swap's condition
            expr = f"{locals_[c.group(1)]} ? {c.group(2)} : {c.group(3)}"
        return expr

    # make_plan(Shape, Spec, SplitPolicy, pad, sms): common/kernel_lib/family/plan.hpp
    out.update(spec=expand(args[1]), split=expand(args[2]), pad=expand(args[3]))
    return out
