#include "skade/io/fault_injecting_file_io.h"

namespace skade {

Status FaultInjectingFileIO::WriteNewFile(std::string_view location, std::string_view data) {
  ++writes_;
  if (countdown_ > 0 && --countdown_ == 0) {
    if (after_write_) {
      // The temporary lands; the publish (rename) fails.
      SKADE_RETURN_IF_ERROR(inner_->WriteNewFile(std::string(location) + ".injected.tmp", data));
      return IoError("injected failure publishing " + LocalPath(location));
    }
    return IoError("injected failure writing " + LocalPath(location));
  }
  return inner_->WriteNewFile(location, data);
}

Status FaultInjectingFileIO::DeleteFile(std::string_view location) {
  if (fail_deletes_) return IoError("injected failure deleting " + LocalPath(location));
  return inner_->DeleteFile(location);
}

}  // namespace skade
