#include "bifrost/source/rest_catalog_source.h"

#include <stdlib.h>

#include <cctype>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "skade/lineage/http_post_internal.h"
#include "skade/table/table.h"

namespace bifrost {
namespace {

using Json = nlohmann::json;
constexpr int kTimeoutMs = 30000;

using skade::lineage::UrlEncode;

Result<std::string> Decode(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%') {
      if (i + 2 >= s.size() || !std::isxdigit(static_cast<unsigned char>(s[i + 1])) ||
          !std::isxdigit(static_cast<unsigned char>(s[i + 2])))
        return skade::InvalidArgument("a '%' in '" + std::string(s) + "' is not followed by two hex digits");
      out += static_cast<char>(std::stoi(std::string(s.substr(i + 1, 2)), nullptr, 16));
      i += 2;
    } else {
      out += s[i] == '+' ? ' ' : s[i];
    }
  }
  return out;
}

// A namespace in a REST path: its levels (skade's dots) joined by the 0x1F separator.
std::string NamespacePath(const std::string& ns) {
  std::string out;
  size_t start = 0;
  while (true) {
    size_t dot = ns.find('.', start);
    out += UrlEncode(ns.substr(start, dot == std::string::npos ? std::string::npos : dot - start));
    if (dot == std::string::npos) return out;
    out += "%1F";
    start = dot + 1;
  }
}

std::string Excerpt(const std::string& body) {
  std::string out;
  for (unsigned char c : body.substr(0, 60)) out += c >= 0x20 && c < 0x7f ? static_cast<char>(c) : '?';
  return body.size() > 60 ? out + "..." : out;
}

}  // namespace

struct RestCatalogSource::State {
  std::string base;       // http://host:port[/path], no trailing '/'
  std::string warehouse;  // ?warehouse=, empty when not given
  std::string token;
  std::optional<std::string> prefix;  // from /v1/config, once it answered
  std::filesystem::path scratch_dir;
  std::unique_ptr<skade::Catalog> scratch;  // holds the FileIO tables read through

  ~State() {
    scratch.reset();
    std::error_code ec;
    if (!scratch_dir.empty()) std::filesystem::remove_all(scratch_dir, ec);
  }

  std::string Where() const { return "the REST catalog at " + base; }

  // GET `path` (under base) as JSON; errors name the catalog and what it answered.
  Result<Json> Get(const std::string& path) {
    skade::lineage::HttpHeaders headers = {{"Accept", "application/json"}};
    if (!token.empty()) headers.emplace_back("Authorization", "Bearer " + token);
    auto reply = skade::lineage::HttpGet(base + path, headers, kTimeoutMs);
    if (!reply) return skade::MakeError(reply.error().kind, Where() + ": " + reply.error().message);
    Json body = Json::parse(reply->body, nullptr, /*allow_exceptions=*/false);
    std::string said;
    if (!body.is_discarded() && body.is_object() && body.contains("error") && body["error"].is_object() &&
        body["error"].value("message", Json()).is_string())
      said = ": " + body["error"]["message"].get<std::string>();
    int status = reply->status;
    std::string what = Where() + " answered GET " + path + " with HTTP " + std::to_string(status) + said;
    if (status == 401 || status == 403)
      return skade::InvalidArgument(what + " (give the catalog's bearer token with token_file)");
    if (status == 404) return skade::NotFound(what);
    if (status != 200) return skade::IoError(what);
    if (body.is_discarded() || !body.is_object())
      return skade::Corrupt(Where() + " answered GET " + path + " with something that is not a JSON object: '" +
                            Excerpt(reply->body) + "'");
    return body;
  }

  Status Configure() {
    if (prefix) return {};
    SKADE_ASSIGN_OR_RETURN(Json config,
                           Get("/v1/config" + (warehouse.empty() ? "" : "?warehouse=" + UrlEncode(warehouse))));
    std::string found;
    for (const char* part : {"defaults", "overrides"}) {  // overrides win
      const Json& p = config.contains(part) ? config[part] : Json();
      if (p.is_object() && p.contains("prefix") && p["prefix"].is_string()) found = p["prefix"].get<std::string>();
    }
    prefix = found;
    return {};
  }

  std::string Root() const { return "/v1/" + (prefix->empty() ? "" : UrlEncode(*prefix) + "/"); }

  std::string TableNames(const std::string& ns) {
    auto list = Get(Root() + "namespaces/" + NamespacePath(ns) + "/tables");
    if (!list || !(*list)["identifiers"].is_array()) return "none readable in '" + ns + "'";
    std::string out;
    for (const auto& id : (*list)["identifiers"]) {
      if (!id.is_object() || !id.value("name", Json()).is_string()) continue;
      out += (out.empty() ? "" : ", ") + ns + "." + id["name"].get<std::string>();
    }
    return out.empty() ? "none in '" + ns + "'" : out;
  }

  Result<std::unique_ptr<skade::Table>> Load(const skade::TableIdent& ident) {
    SKADE_RETURN_IF_ERROR(Configure());
    auto loaded = Get(Root() + "namespaces/" + NamespacePath(ident.ns) + "/tables/" + UrlEncode(ident.name));
    if (!loaded) {
      if (loaded.error().kind != skade::ErrorKind::kNotFound) return std::unexpected(std::move(loaded).error());
      return skade::NotFound("table '" + ident.ToString() + "' not found in " + Where() +
                             " (tables: " + TableNames(ident.ns) + ")");
    }
    const Json& metadata = (*loaded)["metadata"];
    const Json& location = (*loaded)["metadata-location"];
    if (!metadata.is_object() || !location.is_string())
      return skade::Corrupt(Where() + ": loadTable of '" + ident.ToString() +
                            "' holds no 'metadata' object and 'metadata-location'");
    auto parsed = skade::ParseTableMetadata(metadata.dump());
    if (!parsed)
      return skade::Corrupt(Where() + ": the metadata of '" + ident.ToString() +
                            "' does not parse: " + parsed.error().message);
    skade::LoadedTable table{ident, location.get<std::string>(),
                             std::make_shared<const skade::TableMetadata>(std::move(*parsed))};
    return std::make_unique<skade::Table>(*scratch, std::move(table));
  }
};

Result<std::unique_ptr<RestCatalogSource>> RestCatalogSource::Make(const std::string& uri,
                                                                   std::string token) {
  if (!uri.starts_with("http://") && !uri.starts_with("https://"))
    return skade::InvalidArgument("REST catalog '" + uri + "' is not an http:// or https:// URL");
  auto state = std::make_unique<State>();
  size_t q = uri.find('?');
  state->base = uri.substr(0, q);
  while (state->base.ends_with('/')) state->base.pop_back();
  if (q != std::string::npos) {
    std::string_view query = std::string_view(uri).substr(q + 1);
    while (!query.empty()) {
      size_t amp = query.find('&');
      std::string_view pair = query.substr(0, amp);
      query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
      size_t eq = pair.find('=');
      std::string_view key = pair.substr(0, eq);
      if (key != "warehouse" || eq == std::string_view::npos)
        return skade::InvalidArgument("REST catalog '" + uri + "': unknown parameter '" + std::string(key) +
                                      "' (known: warehouse=NAME)");
      SKADE_ASSIGN_OR_RETURN(state->warehouse, Decode(pair.substr(eq + 1)));
    }
  }
  state->token = std::move(token);
  std::string tmpl = (std::filesystem::temp_directory_path() / "bifrost-rest-XXXXXX").string();
  if (!mkdtemp(tmpl.data())) return skade::IoError("cannot make a scratch folder in " + tmpl);
  state->scratch_dir = tmpl;
  SKADE_ASSIGN_OR_RETURN(state->scratch, skade::Catalog::Create(tmpl));
  return std::unique_ptr<RestCatalogSource>(new RestCatalogSource(std::move(state)));
}

RestCatalogSource::RestCatalogSource(std::unique_ptr<State> state) : s_(std::move(state)) {}
RestCatalogSource::~RestCatalogSource() = default;

Result<std::optional<Fetched>> RestCatalogSource::FetchNew(const CompiledTable& ct,
                                                           const TableState& state) {
  SKADE_ASSIGN_OR_RETURN(auto table, s_->Load(ct.ident));
  return FetchFromTable(*table, ct, state, [&] { return s_->TableNames(ct.ident.ns); });
}

Result<std::shared_ptr<const skade::Schema>> RestCatalogSource::SchemaOf(
    const skade::TableIdent& ident) {
  SKADE_ASSIGN_OR_RETURN(auto table, s_->Load(ident));
  return table->metadata()->schema();
}

Result<RestCatalogSource*> RestSources::For(const TableMapping& table) {
  auto& source = sources_[{table.source, table.token_file}];
  if (source) return source.get();
  std::string token;
  if (!table.token_file.empty()) {
    std::ifstream in(table.token_file);
    std::stringstream text;
    text << in.rdbuf();
    if (!in) return skade::InvalidArgument("token_file '" + table.token_file + "' of table '" + table.table +
                                           "' cannot be read");
    token = text.str();
    while (!token.empty() && std::isspace(static_cast<unsigned char>(token.back()))) token.pop_back();
    token.erase(0, token.find_first_not_of(" \t\r\n"));
    if (token.empty() || token.find_first_of("\r\n") != std::string::npos)
      return skade::InvalidArgument("token_file '" + table.token_file + "' of table '" + table.table +
                                    "' must hold the token alone, on one line");
  }
  SKADE_ASSIGN_OR_RETURN(source, RestCatalogSource::Make(table.source.substr(5), std::move(token)));
  return source.get();
}

}  // namespace bifrost
