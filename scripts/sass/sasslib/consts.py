"""The namespace-scope integer constants of a step's source (`constexpr int BM = 64, BN = BM * 2;`),
so a `count` rule or a `launch` line can say `TM*TN*BK`.

Each initialiser is evaluated as C++ integer arithmetic over literals and the constants declared
before it: + - * / % ( ), unary minus, and sizeof of a type of known size (sizeof(__nv_bfloat16) = 2,
sizeof(float) = 4, ...). `/` and `%` truncate toward zero as in C++. Anything else (a function call,
a cast, sizeof of a struct, a constant declared later) is not guessed at: the constant is recorded as
refused, with the reason, and an expression that uses it fails naming it.
"""
from __future__ import annotations

import ast
import dataclasses
import os
import re

from .tools import REPO, ToolError

# The integer types a namespace-scope constant may be declared with.
INT_TYPES = ("int", "unsigned", "unsigned int", "long", "unsigned long", "long long", "unsigned long long",
             "int32_t", "uint32_t", "int64_t", "uint64_t", "size_t")
# sizeof of the types a tile constant may mention (CUDA's device sizes).
TYPE_SIZES = {"char": 1, "int8_t": 1, "uint8_t": 1, "short": 2, "int16_t": 2, "uint16_t": 2,
              "__nv_bfloat16": 2, "__half": 2, "half": 2, "int": 4, "unsigned": 4, "int32_t": 4,
              "uint32_t": 4, "float": 4, "double": 8, "int64_t": 8, "uint64_t": 8, "size_t": 8,
              "long long": 8, "float2": 8, "float4": 16, "int4": 16, "uint4": 16, "__nv_bfloat162": 4,
              "__half2": 4}

DECL_RE = re.compile(r"^(?:inline\s+)?constexpr\s+(?P<type>" + "|".join(sorted((re.escape(t).replace(r"\ ", r"\s+") for t in INT_TYPES),
                                                                    key=len, reverse=True))
                     + r")\s+(?P<body>[^;]+);", re.M)


DEFINE_RE = re.compile(r"^[ \t]*#[ \t]*define[ \t]+(?P<name>[A-Za-z_]\w*)[ \t]+(?P<value>\d[\w']*)[ \t]*$", re.M)


@dataclasses.dataclass
class Refused:
    """A constant whose initialiser is not integer arithmetic this reader evaluates."""
    name: str
    expr: str
    reason: str
    where: str     # "kernels/14_two_consumers.cu:43"

    def message(self):
        return f"{self.name} = `{self.expr}` ({self.where}) cannot be evaluated: {self.reason}"


def strip_comments(text):
    """C++ comments replaced by spaces (newlines kept, so line numbers still hold)."""
    return re.sub(r"//[^\n]*|/\*.*?\*/", lambda m: re.sub(r"[^\n]", " ", m.group(0)), text, flags=re.S)


def split_top(body):
    """`A = 1, B = f(2, 3)` -> ["A = 1", "B = f(2, 3)"]: commas outside brackets."""
    parts, depth, cur = [], 0, ""
    for ch in body:
        if ch in "([{<":
            depth += 1
        elif ch in ")]}>":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    return parts + [cur]


def c_literal(tok):
    """An integer literal as C++ spells it (0x28, 1'024, 128u, 8ULL, 010) -> int, or None."""
    t = tok.replace("'", "")
    m = re.fullmatch(r"(0[xX][0-9a-fA-F]+|0[bB][01]+|\d+)(?:[uU](?:ll|LL|[lL])?|(?:ll|LL|[lL])[uU]?)?", t)
    if not m:
        return None
    digits = m.group(1)
    if digits[:2] in ("0x", "0X"):
        return int(digits, 16)
    if digits[:2] in ("0b", "0B"):
        return int(digits[2:], 2)
    return int(digits, 8) if len(digits) > 1 and digits[0] == "0" else int(digits)


def c_div(a, b):
    if b == 0:
        raise ValueError("division by zero")
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def evaluate(expr, consts):
    """The value of a C++ integer expression over `consts` (NAME -> int or Refused). Raises
    ValueError saying what is not integer arithmetic, or naming the constant that is unknown or
    was refused."""
    text = " ".join(expr.split())
    def size_of(m):
        t = " ".join(m.group(1).split())
        if t not in TYPE_SIZES:
            raise ValueError(f"sizeof({t}): the size of {t} is not known to this reader")
        return str(TYPE_SIZES[t])
    text = re.sub(r"\bsizeof\s*\(\s*([A-Za-z_][\w ]*?)\s*\)", size_of, text)
    if re.search(r"\bsizeof\b", text):
        raise ValueError("sizeof of an expression is not evaluated")
    def literal(m):
        v = c_literal(m.group(0))
        if v is None:
            raise ValueError(f"`{m.group(0)}` is not an integer literal")
        return str(v)
    text = re.sub(r"(?<![\w.])\d[\w']*", literal, text)
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError:
        raise ValueError(f"`{expr.strip()}` is not integer arithmetic (+ - * / % and parentheses)") from None

    def ev(node):
        if isinstance(node, ast.Expression):
            return ev(node.body)
        if isinstance(node, ast.Constant) and type(node.value) is int:
            return node.value
        if isinstance(node, ast.Name):
            if node.id not in consts:
                raise ValueError(f"{node.id} is not a constant read before it")
            v = consts[node.id]
            if isinstance(v, Refused):
                raise ValueError(f"it uses {node.id}, which was refused: {v.reason}")
            return v
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            v = ev(node.operand)
            return -v if isinstance(node.op, ast.USub) else v
        if isinstance(node, ast.BinOp):
            ops = {ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b, ast.Mult: lambda a, b: a * b,
                   ast.Div: c_div, ast.Mod: lambda a, b: a - c_div(a, b) * b}
            op = ops.get(type(node.op))
            if op:
                return op(ev(node.left), ev(node.right))
        what = ast.get_source_segment(text, node) or type(node).__name__
        raise ValueError(f"`{what}` is not integer arithmetic (+ - * / % and parentheses)")
    return ev(tree)


def read_constants(text, where="source"):
    """NAME -> int, or Refused, for every `constexpr <integer type> NAME = <expr>, ...;` declaration
    that starts a line (namespace scope), in file order; and `#define NAME <integer literal>` lines, the
    default of a build-time override (`#ifndef STEP31_PROMOTE_EVERY` / `#define ... 4`: the value the
    step's own build, the one dumped, uses)."""
    consts = {}
    clean = strip_comments(text)
    events = sorted([(m.start(), m) for m in DECL_RE.finditer(clean)] +
                    [(m.start(), m) for m in DEFINE_RE.finditer(clean)], key=lambda e: e[0])
    for _, m in events:
        line = clean.count("\n", 0, m.start()) + 1
        if m.re is DEFINE_RE:
            v = c_literal(m.group("value"))
            if v is not None:
                consts.setdefault(m.group("name"), v)
            continue
        for decl in split_top(m.group("body")):
            d = re.fullmatch(r"\s*([A-Za-z_]\w*)\s*(?:=\s*(.+?)|\{(.*)\})\s*", decl, re.S)
            if not d:
                name = re.match(r"\s*(\w*)", decl).group(1) or decl.strip()
                consts[name] = Refused(name, decl.strip(), "not a `NAME = value` declarator", f"{where}:{line}")
                continue
            name, expr = d.group(1), d.group(2) if d.group(2) is not None else d.group(3)
            try:
                consts[name] = evaluate(expr, consts)
            except ValueError as e:
                consts[name] = Refused(name, " ".join(expr.split()), str(e), f"{where}:{line}")
    return consts


def source_constants(path):
    """read_constants of a source file (empty when there is none)."""
    if not path or not os.path.exists(path):
        return {}
    rel = os.path.relpath(path, REPO) if os.path.abspath(path).startswith(REPO + os.sep) else path
    return read_constants(open(path).read(), rel)


def eval_count(expr, consts):
    """The value of a rule's or a launch line's expression over a step's constants."""
    names = re.findall(r"[A-Za-z_]\w*", expr)
    missing = [n for n in names if n not in consts]
    if missing:
        raise ToolError(f"`{expr}`: {', '.join(missing)} not among the constexpr int constants of the source")
    refused = [consts[n] for n in dict.fromkeys(names) if isinstance(consts[n], Refused)]
    if refused:
        raise ToolError(f"`{expr}`: " + "; ".join(r.message() for r in refused))
    try:
        return evaluate(expr, consts)
    except ValueError as e:
        raise ToolError(f"`{expr}`: {e}") from None


def cmd_constants(args, unit_source):
    """`constants`: print a source's constants (NAME = value, or NAME refused: why), or with --eval
    the value of one expression (exit 2 with the reason when it cannot be evaluated)."""
    consts = source_constants(unit_source)
    if args.eval:
        print(eval_count(args.eval, consts))
        return 0
    for name, v in consts.items():
        print(f"{name} = {v}" if not isinstance(v, Refused) else f"{name} refused: {v.message()}")
    return 0
