#include "skade/common/result.h"

namespace skade {

std::string_view ErrorKindName(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::kInvalidArgument: return "InvalidArgument";
    case ErrorKind::kNotFound: return "NotFound";
    case ErrorKind::kAlreadyExists: return "AlreadyExists";
    case ErrorKind::kNotEmpty: return "NotEmpty";
    case ErrorKind::kCommitConflict: return "CommitConflict";
    case ErrorKind::kCommitStateUnknown: return "CommitStateUnknown";
    case ErrorKind::kCorrupt: return "Corrupt";
    case ErrorKind::kIoError: return "IoError";
    case ErrorKind::kUnsupported: return "Unsupported";
    case ErrorKind::kInternal: return "Internal";
  }
  return "Unknown";
}

std::string JoinProblems(const std::vector<std::string>& problems) {
  std::string msg;
  for (const auto& p : problems) msg += (msg.empty() ? "" : "; ") + p;
  return msg;
}

Error Error::WithContext(std::string_view context) const& {
  return Error{kind, std::string(context) + ": " + message};
}

Error Error::WithContext(std::string_view context) && {
  message = std::string(context) + ": " + message;
  return std::move(*this);
}

std::string Error::ToString() const {
  return std::string(ErrorKindName(kind)) + ": " + message;
}

}  // namespace skade
