// The reference library's own id path, `SentencePieceProcessor::Encode(text, &ids)`, for timing.
// The `sentencepiece` crate only exposes `EncodeAsSerializedProto` (pieces, surfaces and offsets,
// serialized and parsed again in Rust), which is not what a C++ or Python user of the library pays.
// Links against the static library that sentencepiece-sys builds; sentencepiece_processor.h is a
// copy of that version's header (0.2.1, Apache-2.0).

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "sentencepiece_processor.h"

namespace {
struct Handle {
  sentencepiece::SentencePieceProcessor spp;
  std::vector<int> ids;
};
}  // namespace

extern "C" {

// A processor loaded from `path`, or null (with the status message in `error`, up to `error_len`).
void *bp_spm_load(const char *path, size_t path_len, char *error, size_t error_len) {
  auto *h = new Handle();
  auto status = h->spp.Load(absl::string_view(path, path_len));
  if (!status.ok()) {
    std::string msg = status.ToString();
    if (error_len > 0) {
      size_t n = msg.size() < error_len - 1 ? msg.size() : error_len - 1;
      std::memcpy(error, msg.data(), n);
      error[n] = '\0';
    }
    delete h;
    return nullptr;
  }
  return h;
}

void bp_spm_free(void *handle) { delete static_cast<Handle *>(handle); }

// Encodes `text` into the handle's reused id vector; returns its data and length through `ids`
// and `len` (valid until the next call), and the status code (0 = OK).
int bp_spm_encode(void *handle, const char *text, size_t text_len, const int32_t **ids,
                  size_t *len) {
  auto *h = static_cast<Handle *>(handle);
  auto status = h->spp.Encode(absl::string_view(text, text_len), &h->ids);
  *ids = h->ids.data();
  *len = h->ids.size();
  return static_cast<int>(status.code());
}

}  // extern "C"
