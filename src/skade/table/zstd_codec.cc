// Parquet pages compressed with zstd, through contexts kept per thread.
//
// Arrow's zstd codec makes a fresh compression or decompression context for every page
// (1M rows of 11 columns are about 600 pages). Making one allocates its workspace and
// probes the CPU (cpuid, an exit to the hypervisor on a VM); perf showed it at 3-8% of a
// scan's CPU. Arrow offers no way to register a codec, but Parquet obtains its codecs
// through Codec::Create, an exported function of libarrow that libparquet calls through
// its procedure linkage table, so a definition in the executable takes its place (ELF
// symbol interposition; see zstd_codec.h). zstd codecs come from here; every other codec,
// and zstd with context parameters set, from Arrow's own Codec::Create, found with
// dlsym(RTLD_NEXT). Streaming (MakeCompressor) stays Arrow's. The frames are standard
// zstd either way, written with the system's libzstd.
#include "skade/table/zstd_codec.h"

#include <dlfcn.h>
#include <zstd.h>

#include <arrow/util/compression.h>

#include <atomic>
#include <memory>
#include <string>

#include "skade/common/thread_clock.h"

namespace {

using arrow::Compression;
using arrow::Result;
using arrow::Status;
using arrow::util::Codec;
using arrow::util::CodecOptions;

std::atomic<int64_t> contexts_made{0};
std::atomic<bool> time_decompression{false};
std::atomic<int64_t> decompress_nanos{0};

// This thread's context of one kind, made on first use and kept until the thread ends.
template <typename Ctx, Ctx* (*make)(), size_t (*release)(Ctx*)>
Ctx* ThreadContext() {
  struct Release {
    void operator()(Ctx* c) const { release(c); }
  };
  thread_local std::unique_ptr<Ctx, Release> ctx;
  if (!ctx) {
    ctx.reset(make());
    if (ctx) contexts_made.fetch_add(1, std::memory_order_relaxed);
  }
  return ctx.get();
}
constexpr auto ThreadDCtx = ThreadContext<ZSTD_DCtx, ZSTD_createDCtx, ZSTD_freeDCtx>;
constexpr auto ThreadCCtx = ThreadContext<ZSTD_CCtx, ZSTD_createCCtx, ZSTD_freeCCtx>;

Status ZstdError(const char* what, size_t code) {
  return Status::IOError("zstd ", what, " failed: ", ZSTD_getErrorName(code));
}

class ZstdCodec final : public Codec {
 public:
  explicit ZstdCodec(std::unique_ptr<Codec> arrow) : arrow_(std::move(arrow)), level_(arrow_->compression_level()) {}

  Result<int64_t> Decompress(int64_t input_len, const uint8_t* input, int64_t output_len,
                             uint8_t* output) override {
    ZSTD_DCtx* ctx = ThreadDCtx();
    if (!ctx) return Status::OutOfMemory("zstd: no decompression context");
    static uint8_t empty;  // zstd wants a valid pointer even for no output
    const bool timed = time_decompression.load(std::memory_order_relaxed);
    const int64_t start = timed ? skade::ThreadCpuNanos() : 0;
    size_t n = ZSTD_decompressDCtx(ctx, output ? output : &empty, static_cast<size_t>(output_len), input,
                                   static_cast<size_t>(input_len));
    if (timed) decompress_nanos.fetch_add(skade::ThreadCpuNanos() - start, std::memory_order_relaxed);
    if (ZSTD_isError(n)) return ZstdError("decompression", n);
    // Parquet passes the page's recorded uncompressed size: anything else is corruption.
    if (static_cast<int64_t>(n) != output_len)
      return Status::IOError("zstd page decompressed to ", n, " bytes, expected ", output_len);
    return static_cast<int64_t>(n);
  }

  Result<int64_t> Compress(int64_t input_len, const uint8_t* input, int64_t output_len,
                           uint8_t* output) override {
    ZSTD_CCtx* ctx = ThreadCCtx();
    if (!ctx) return Status::OutOfMemory("zstd: no compression context");
    size_t n = ZSTD_compressCCtx(ctx, output, static_cast<size_t>(output_len), input,
                                 static_cast<size_t>(input_len), level_);
    if (ZSTD_isError(n)) return ZstdError("compression", n);
    return static_cast<int64_t>(n);
  }

  int64_t MaxCompressedLen(int64_t input_len, const uint8_t*) override {
    return static_cast<int64_t>(ZSTD_compressBound(static_cast<size_t>(input_len)));
  }
  Result<std::shared_ptr<arrow::util::Compressor>> MakeCompressor() override { return arrow_->MakeCompressor(); }
  Result<std::shared_ptr<arrow::util::Decompressor>> MakeDecompressor() override {
    return arrow_->MakeDecompressor();
  }
  Compression::type compression_type() const override { return Compression::ZSTD; }
  int minimum_compression_level() const override { return arrow_->minimum_compression_level(); }
  int maximum_compression_level() const override { return arrow_->maximum_compression_level(); }
  int default_compression_level() const override { return arrow_->default_compression_level(); }
  int compression_level() const override { return level_; }

 private:
  std::unique_ptr<Codec> arrow_;  // Arrow's own, for streaming and the level limits
  const int level_;               // arrow_'s, resolved from "default"; read once per page
};

using CreateFn = Result<std::unique_ptr<Codec>> (*)(Compression::type, const CodecOptions&);

CreateFn ArrowCreate() {
  // The mangled name of the declaration this file defines.
  static auto fn = reinterpret_cast<CreateFn>(
      dlsym(RTLD_NEXT, "_ZN5arrow4util5Codec6CreateENS_11Compression4typeERKNS0_12CodecOptionsE"));
  return fn;
}

}  // namespace

namespace arrow::util {

Result<std::unique_ptr<Codec>> Codec::Create(Compression::type type, const CodecOptions& options) {
  CreateFn arrow_create = ArrowCreate();
  if (!arrow_create) return Status::Invalid("Arrow's Codec::Create not found after the executable");
  ARROW_ASSIGN_OR_RAISE(auto codec, arrow_create(type, options));
  if (type != Compression::ZSTD) return codec;
  if (auto* z = dynamic_cast<const ZstdCodecOptions*>(&options);
      z && (!z->compression_context_params.empty() || !z->decompression_context_params.empty()))
    return codec;
  return std::make_unique<ZstdCodec>(std::move(codec));
}

}  // namespace arrow::util

namespace skade {

int64_t ZstdContextsMade() { return contexts_made.load(std::memory_order_relaxed); }

void TimeZstdDecompression(bool on) { time_decompression.store(on, std::memory_order_relaxed); }

int64_t ZstdDecompressNanos() { return decompress_nanos.load(std::memory_order_relaxed); }

}  // namespace skade
