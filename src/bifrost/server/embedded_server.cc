#include "bifrost/server/embedded_server.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>
#include <vector>

namespace bifrost {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

constexpr std::chrono::milliseconds kTimeoutMax = 24h;

std::string FindOnPath(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "/usr/bin:/bin";
  size_t start = 0;
  while (start <= dirs.size()) {
    size_t end = dirs.find(':', start);
    std::string dir =
        dirs.substr(start, end == std::string::npos ? std::string::npos : end - start);
    fs::path candidate = fs::path(dir.empty() ? "." : dir) / name;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate.string();
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return {};
}

bool Ready(const ServerAddress& address) {
  auto conn = RedisConnection::Connect(address, 500ms);
  if (!conn) return false;
  (*conn)->SetTimeout(500ms);  // a wedged server must not hold the start-up loop
  auto pong = (*conn)->Command({"PING"});
  return pong.has_value();  // a server still loading its log answers with an error
}

// Replaying GRAPH.BULK from the append-only log at the next start can wedge FalkorDB
// 4.16 for good (seen: the loader blocked on FalkorDB's graph registry lock), so before
// the server stops its log is rewritten as a snapshot, which the next start loads instead.
// INFO persistence's value of `field` ("" when absent).
std::string InfoField(const std::string& info, const std::string& field) {
  auto at = info.find("\n" + field + ":");
  if (at == std::string::npos) return "";
  at += field.size() + 2;
  return info.substr(at, info.find_first_of("\r\n", at) - at);
}

void CompactLog(RedisConnection& conn) {
  // Nothing appended since the last rewrite (a process that only read): nothing to do.
  auto before = conn.Command({"INFO", "persistence"});
  if (!before || InfoField(before->text, "aof_current_size") == InfoField(before->text, "aof_base_size")) return;
  if (!conn.Command({"BGREWRITEAOF"})) return;
  for (int i = 0; i < 600; ++i) {  // up to 30 s; past that the server stops with its log as it is
    auto info = conn.Command({"INFO", "persistence"});
    if (!info) return;
    if (InfoField(info->text, "aof_rewrite_in_progress") == "0" &&
        InfoField(info->text, "aof_rewrite_scheduled") == "0")
      return;
    std::this_thread::sleep_for(50ms);
  }
}

std::string LogTail(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  std::string out;
  for (size_t i = lines.size() > 3 ? lines.size() - 3 : 0; i < lines.size(); ++i)
    out += " | " + lines[i];
  return out;
}

}  // namespace

Result<std::unique_ptr<EmbeddedServer>> EmbeddedServer::Start(const std::string& warehouse) {
  fs::path dir = fs::absolute(fs::path(warehouse) / ".bifrost" / "graph");
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return skade::IoError("cannot create " + dir.string() + ": " + ec.message());
  ServerAddress address;
  address.socket_path = (dir / "graph.sock").string();
  if (address.socket_path.size() >= sizeof(sockaddr_un::sun_path))
    return skade::InvalidArgument(
        "the warehouse path is too long for the graph server's unix socket (" +
        address.socket_path + "); use a shorter path or --graph");
  if (Ready(address)) return std::unique_ptr<EmbeddedServer>(new EmbeddedServer(address, 0));

  const char* env_server = std::getenv("BIFROST_VALKEY_SERVER");
  std::string server = env_server && *env_server ? env_server : FindOnPath("valkey-server");
  if (server.empty())
    return skade::NotFound(
        "valkey-server is not installed (run scripts/setup.sh, or pass --graph URL)");
  const char* env_module = std::getenv("BIFROST_FALKORDB_MODULE");
  std::string module = env_module && *env_module ? env_module : BIFROST_DEFAULT_FALKORDB_MODULE;
  if (!fs::exists(module))
    return skade::NotFound("FalkorDB module not found at " + module +
                           " (run scripts/setup.sh or set BIFROST_FALKORDB_MODULE)");
  // The server holds this lock for its whole life (it inherits the descriptor), so a
  // new server never starts on the same files while an old one is still shutting down.
  std::string lock_path = (dir / "server.lock").string();
  int lock_fd = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (lock_fd < 0) return skade::IoError("cannot open " + lock_path);
  auto lock_deadline = std::chrono::steady_clock::now() + 30s;
  while (::flock(lock_fd, LOCK_EX | LOCK_NB) != 0) {
    if (Ready(address)) {  // another bifrost's server finished starting: share it
      ::close(lock_fd);
      return std::unique_ptr<EmbeddedServer>(new EmbeddedServer(address, 0));
    }
    if (std::chrono::steady_clock::now() > lock_deadline) {
      ::close(lock_fd);
      return skade::IoError("a graph server under " + dir.string() +
                            " does not answer and does not exit");
    }
    std::this_thread::sleep_for(50ms);
  }
  if (Ready(address)) {  // another bifrost started one while we waited
    ::close(lock_fd);
    return std::unique_ptr<EmbeddedServer>(new EmbeddedServer(address, 0));
  }
  fs::remove(address.socket_path, ec);  // left by a server that was killed
  std::string log = (dir / "server.log").string();
  std::vector<std::string> args = {server, "--port", "0", "--unixsocket", address.socket_path,
                                   "--unixsocketperm", "700", "--dir", dir.string(), "--appendonly",
                                   "yes",
                                   // Durable before the state ledger may advance past it.
                                   "--appendfsync", "always", "--save", "", "--daemonize", "no",
                                   "--logfile", log, "--loadmodule", module,
                                   // Lets writes honour each query's timeout, as reads do
                                   // (FalkorDB applies it to writes only under a cap).
                                   "TIMEOUT_MAX", std::to_string(kTimeoutMax.count())};
  pid_t parent = ::getpid();
  auto launch = [&]() -> pid_t {
    pid_t pid = ::fork();
    if (pid != 0) return pid;
    // The server dies with bifrost, even when bifrost is killed.
    ::prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (::getppid() != parent) ::_exit(1);
    ::fcntl(lock_fd, F_SETFD, 0);  // keep the lock across exec
    ::setpgid(0, 0);  // a terminal's Ctrl-C goes to bifrost, which stops the server cleanly
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    ::execv(server.c_str(), argv.data());
    ::_exit(127);
  };
  // FalkorDB 4.16 can also wedge for good while it loads its log (the loader blocked on
  // the graph registry lock: a race, not a property of the log). The log is durable
  // (appendfsync always), so a server that does not come up is killed and started once
  // more on the same files; this process holds the lock meanwhile.
  constexpr int kAttempts = 2;
  for (int attempt = 1; attempt <= kAttempts; ++attempt) {
    pid_t pid = launch();
    if (pid < 0) {
      ::close(lock_fd);
      return skade::IoError("cannot start " + server);
    }
    auto deadline = std::chrono::steady_clock::now() + 30s;
    while (std::chrono::steady_clock::now() < deadline) {
      if (Ready(address)) {
        ::close(lock_fd);  // the child's copy keeps the lock
        return std::unique_ptr<EmbeddedServer>(new EmbeddedServer(address, pid));
      }
      int status = 0;
      if (::waitpid(pid, &status, WNOHANG) == pid) {
        ::close(lock_fd);
        return skade::IoError("the graph server exited at start-up (log " + log + LogTail(log) + ")");
      }
      std::this_thread::sleep_for(50ms);
    }
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
    fs::remove(address.socket_path, ec);
  }
  ::close(lock_fd);
  return skade::IoError("the graph server did not come up within 30 s, twice (log " + log + LogTail(log) + ")");
}

void EmbeddedServer::Stop() {
  if (pid_ <= 0) return;
  if (auto conn = RedisConnection::Connect(address_, 1000ms)) {
    (*conn)->SetTimeout(30s);
    CompactLog(**conn);
    (void)(*conn)->Command({"SHUTDOWN"});
  }
  for (int i = 0; i < 200; ++i) {
    if (::waitpid(pid_, nullptr, WNOHANG) == pid_) {
      pid_ = 0;
      return;
    }
    std::this_thread::sleep_for(50ms);
  }
  ::kill(pid_, SIGKILL);
  ::waitpid(pid_, nullptr, 0);
  pid_ = 0;
}

EmbeddedServer::~EmbeddedServer() { Stop(); }

}  // namespace bifrost
