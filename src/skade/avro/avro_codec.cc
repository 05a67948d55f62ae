// The container codecs: null, deflate (raw RFC 1951), snappy (+CRC-32), zstandard.
// zlib, snappy and zstd are translated to skade errors here and nowhere else.
#include <snappy.h>
#include <zlib.h>
#include <zstd.h>
#include <zstd_errors.h>

#include <algorithm>
#include <climits>
#include <memory>
#include <string>

#include "skade/avro/avro.h"
#include "skade/avro/avro_codec_internal.h"

namespace skade::avro {
namespace internal {
namespace {

constexpr size_t kMinGrow = 4096;

/// Size of the next output buffer, or 0 when `max_out` is reached.
size_t NextSize(size_t current, size_t in_size, size_t max_out) {
  if (current >= max_out) return 0;
  size_t next = current == 0 ? std::max(kMinGrow, in_size * 4) : current * 2;
  return std::min(next, max_out);
}

std::unexpected<Error> TooLarge(size_t max_out) {
  return Corrupt("block decompresses to more than " + std::to_string(max_out) + " bytes");
}

Status DeflateCompress(std::string_view in, std::string* out) {
  if (in.size() > UINT_MAX / 2) return InvalidArgument("Avro block too large for deflate");
  z_stream zs{};
  if (deflateInit2(&zs, Z_DEFAULT_COMPRESSION, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
    return Internal("deflateInit2 failed");
  }
  std::unique_ptr<z_stream, int (*)(z_stream*)> guard(&zs, deflateEnd);
  out->resize(deflateBound(&zs, static_cast<uLong>(in.size())));
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  zs.avail_in = static_cast<uInt>(in.size());
  zs.next_out = reinterpret_cast<Bytef*>(out->data());
  zs.avail_out = static_cast<uInt>(out->size());
  if (deflate(&zs, Z_FINISH) != Z_STREAM_END) return Internal("deflate did not finish");
  out->resize(zs.total_out);
  return {};
}

Status DeflateDecompress(std::string_view in, size_t max_out, std::string* out) {
  if (in.size() > UINT_MAX) return Corrupt("deflate block too large");
  z_stream zs{};
  if (inflateInit2(&zs, -15) != Z_OK) return Internal("inflateInit2 failed");
  std::unique_ptr<z_stream, int (*)(z_stream*)> guard(&zs, inflateEnd);
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  zs.avail_in = static_cast<uInt>(in.size());
  out->clear();
  size_t produced = 0;
  while (true) {
    if (produced == out->size()) {
      const size_t next = NextSize(out->size(), in.size(), max_out);
      if (next == 0) return TooLarge(max_out);
      out->resize(next);
    }
    zs.next_out = reinterpret_cast<Bytef*>(out->data() + produced);
    zs.avail_out = static_cast<uInt>(std::min<size_t>(out->size() - produced, UINT_MAX));
    const uInt avail_before = zs.avail_out;
    const int rc = inflate(&zs, Z_NO_FLUSH);
    produced += avail_before - zs.avail_out;
    if (rc == Z_STREAM_END) break;
    if (rc != Z_OK && rc != Z_BUF_ERROR) {
      return Corrupt(std::string("deflate: ") + (zs.msg ? zs.msg : "invalid data"));
    }
    // Output room left but no input: the stream is cut short.
    if (zs.avail_out != 0 && zs.avail_in == 0) return Corrupt("deflate: truncated stream");
  }
  out->resize(produced);
  return {};
}

uint32_t Crc32(std::string_view data) {
  return static_cast<uint32_t>(
      crc32_z(0, reinterpret_cast<const Bytef*>(data.data()), data.size()));
}

Status SnappyCompress(std::string_view in, std::string* out) {
  out->clear();
  snappy::Compress(in.data(), in.size(), out);
  const uint32_t crc = Crc32(in);
  for (int shift = 24; shift >= 0; shift -= 8) out->push_back(static_cast<char>(crc >> shift));
  return {};
}

Status SnappyDecompress(std::string_view in, size_t max_out, std::string* out) {
  if (in.size() < 4) return Corrupt("snappy block shorter than its CRC");
  const std::string_view body = in.substr(0, in.size() - 4);
  size_t length = 0;
  if (!snappy::GetUncompressedLength(body.data(), body.size(), &length)) {
    return Corrupt("snappy: invalid block header");
  }
  if (length > max_out) return TooLarge(max_out);
  // Validation walks the block without writing, so no buffer is sized from a lie.
  if (!snappy::IsValidCompressedBuffer(body.data(), body.size())) {
    return Corrupt("snappy: invalid compressed data");
  }
  out->resize(length);
  if (!snappy::RawUncompress(body.data(), body.size(), out->data())) {
    return Corrupt("snappy: invalid compressed data");
  }
  uint32_t expected = 0;
  for (size_t i = body.size(); i < in.size(); ++i) {
    expected = (expected << 8) | static_cast<uint8_t>(in[i]);
  }
  if (Crc32(*out) != expected) return Corrupt("snappy: CRC-32 mismatch");
  return {};
}

Status ZstdCompress(std::string_view in, std::string* out) {
  out->resize(ZSTD_compressBound(in.size()));
  const size_t n = ZSTD_compress(out->data(), out->size(), in.data(), in.size(), 3);
  if (ZSTD_isError(n)) return Internal(std::string("zstd: ") + ZSTD_getErrorName(n));
  out->resize(n);
  return {};
}

Status ZstdDecompress(std::string_view in, size_t max_out, std::string* out) {
  std::unique_ptr<ZSTD_DCtx, size_t (*)(ZSTD_DCtx*)> dctx(ZSTD_createDCtx(), ZSTD_freeDCtx);
  if (!dctx) return Internal("ZSTD_createDCtx failed");
  const unsigned long long known = ZSTD_getFrameContentSize(in.data(), in.size());
  if (known != ZSTD_CONTENTSIZE_ERROR && known != ZSTD_CONTENTSIZE_UNKNOWN) {
    // The frame states its size: decompress in one shot into an exact buffer.
    if (known > max_out) return TooLarge(max_out);
    out->resize(static_cast<size_t>(known));
    const size_t n =
        ZSTD_decompressDCtx(dctx.get(), out->data(), out->size(), in.data(), in.size());
    if (!ZSTD_isError(n)) {
      if (n != known) return Corrupt("zstd: frame content size mismatch");
      return {};
    }
    // More frames follow the first: fall through to streaming.
    if (ZSTD_getErrorCode(n) != ZSTD_error_dstSize_tooSmall) {
      return Corrupt(std::string("zstd: ") + ZSTD_getErrorName(n));
    }
    ZSTD_DCtx_reset(dctx.get(), ZSTD_reset_session_only);
  }
  // Streaming writers (Java's ZstdOutputStream) omit the size: grow a bounded buffer.
  ZSTD_inBuffer input{in.data(), in.size(), 0};
  out->clear();
  size_t produced = 0;
  size_t hint = 1;
  while (true) {
    if (produced == out->size()) {
      const size_t next = NextSize(out->size(), in.size(), max_out);
      if (next == 0) return TooLarge(max_out);
      out->resize(next);
    }
    ZSTD_outBuffer output{out->data(), out->size(), produced};
    hint = ZSTD_decompressStream(dctx.get(), &output, &input);
    if (ZSTD_isError(hint)) return Corrupt(std::string("zstd: ") + ZSTD_getErrorName(hint));
    produced = output.pos;
    if (input.pos == input.size && output.pos < output.size) break;  // all flushed
  }
  if (hint != 0) return Corrupt("zstd: truncated frame");
  out->resize(produced);
  return {};
}

}  // namespace

Status Compress(Codec codec, std::string_view in, std::string* out) {
  switch (codec) {
    case Codec::kNull:
      out->assign(in);
      return {};
    case Codec::kDeflate:
      return DeflateCompress(in, out);
    case Codec::kSnappy:
      return SnappyCompress(in, out);
    case Codec::kZstandard:
      return ZstdCompress(in, out);
  }
  return InvalidArgument("unknown codec");
}

Status Decompress(Codec codec, std::string_view in, size_t max_out, std::string* out) {
  switch (codec) {
    case Codec::kNull:
      if (in.size() > max_out) return TooLarge(max_out);
      out->assign(in);
      return {};
    case Codec::kDeflate:
      return DeflateDecompress(in, max_out, out);
    case Codec::kSnappy:
      return SnappyDecompress(in, max_out, out);
    case Codec::kZstandard:
      return ZstdDecompress(in, max_out, out);
  }
  return Corrupt("unknown codec");
}

}  // namespace internal

Result<Codec> ParseCodec(std::string_view name) {
  if (name == "null") return Codec::kNull;
  if (name == "deflate") return Codec::kDeflate;
  if (name == "snappy") return Codec::kSnappy;
  if (name == "zstandard") return Codec::kZstandard;
  return InvalidArgument("unknown Avro codec '" + std::string(name) + "'");
}

std::string_view CodecName(Codec codec) {
  switch (codec) {
    case Codec::kNull:
      return "null";
    case Codec::kDeflate:
      return "deflate";
    case Codec::kSnappy:
      return "snappy";
    case Codec::kZstandard:
      return "zstandard";
  }
  return "null";
}

}  // namespace skade::avro
