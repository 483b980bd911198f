#include "steps_json.hpp"

#include <fmt/format.h>

namespace gemm {

namespace {

/// s as a JSON string literal: quotes, backslashes and control characters escaped; other bytes
/// (UTF-8 included) as they are.
std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += char(c);
    } else if (c < 0x20) {
      out += fmt::format("\\u{:04x}", c);
    } else {
      out += char(c);
    }
  }
  return out + "\"";
}

const char* boolean(bool b) { return b ? "true" : "false"; }

}  // namespace

std::string steps_json(const std::vector<Step>& steps) {
  std::string out = "{\n  \"generated_by\": \"make steps-json (build/bin/registry_json, the registry of kernels/*.cu): "
                    "do not edit by hand\",\n  \"steps\": [\n";
  for (size_t i = 0; i < steps.size(); ++i) {
    const Step& s = steps[i];
    const Capabilities& c = s.caps;
    out += "    {\n";
    out += fmt::format("      \"id\": {},\n", quoted(s.id));
    out += fmt::format("      \"name\": {},\n", quoted(s.name));
    out += fmt::format("      \"parent\": {},\n", quoted(s.parent));
    out += fmt::format("      \"technique\": {},\n", quoted(s.technique));
    out += fmt::format("      \"dtype\": {},\n", quoted(dtype_name(s.dtype)));
    out += fmt::format("      \"scaling\": {},\n", quoted(scaling_name(s.scaling)));
    out += fmt::format("      \"accumulation\": {},\n", quoted(accumulation_name(s.accumulation)));
    out += fmt::format("      \"required_cc\": {},\n", s.required_cc);
    out += fmt::format("      \"persistent\": {},\n", boolean(s.persistent));
    out += fmt::format("      \"workspace\": {},\n", boolean(s.workspace_bytes != nullptr));
    out += fmt::format("      \"fixture\": {},\n", boolean(s.fixture));
    out += fmt::format("      \"tile\": {{\"bm\": {}, \"bn\": {}, \"bk\": {}, \"stages\": {}}},\n", s.tile.bm, s.tile.bn,
                       s.tile.bk, s.tile.stages);
    out += fmt::format("      \"threads\": {},\n", s.threads);
    out += fmt::format(
        "      \"caps\": {{\"stream_k\": {}, \"swap_ab\": {}, \"tile_menu\": {}, \"split_k\": {}, \"swap_sized\": {}, "
        "\"pad_pitch\": {}, \"measured\": {}}}\n",
        boolean(c.stream_k), boolean(c.swap_ab), boolean(c.tile_menu), boolean(c.split_k), boolean(c.swap_sized),
        boolean(c.pad_pitch), boolean(c.measured));
    out += i + 1 < steps.size() ? "    },\n" : "    }\n";
  }
  return out + "  ]\n}\n";
}

}  // namespace gemm
