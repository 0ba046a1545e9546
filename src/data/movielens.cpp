// MovieLens ratings files and the official NCF leave-one-out split.
#include "kerascpp/data/movielens.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>
#include <string_view>
#include <unordered_map>

#include "check.hpp"
#include "data/byte_stream.hpp"
#include "data/csv_values.hpp"
#include "kerascpp/error.hpp"

namespace kerascpp::data {
namespace {

constexpr const char* kMovielensOp = "read_movielens_ratings";
constexpr std::string_view kCsvHeader = "userId,movieId,rating,timestamp";

// The line's four fields, split at `sep`; false when there are not exactly four.
bool split4(std::string_view line, std::string_view sep, std::string_view (&fields)[4]) {
  for (int i = 0; i < 4; ++i) {
    const std::size_t at = i < 3 ? line.find(sep) : std::string_view::npos;
    if (i < 3 && at == std::string_view::npos) return false;
    fields[i] = line.substr(0, at);
    if (i < 3) line.remove_prefix(at + sep.size());
  }
  return fields[3].find(sep) == std::string_view::npos;
}

}  // namespace

MovieLensRatings read_movielens_ratings(const std::string& path) {
  detail::BufferedInput in(detail::open_byte_stream(path, detail::Compression::none, kMovielensOp));
  std::vector<std::int64_t> users, items, times;
  std::vector<float> ratings;
  std::string line;
  std::int64_t line_no = 0;
  std::string_view sep = "::";
  static constexpr const char* kNames[4] = {"user id", "movie id", "rating", "timestamp"};
  while (in.read_line(line)) {
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line_no == 1 && line == kCsvHeader) {
      sep = ",";
      continue;
    }
    if (line.empty()) continue;  // a blank last line
    std::string_view f[4];
    KERASCPP_CHECK_IO(split4(line, sep, f), "{}: '{}' line {}: expected 4 fields separated by \"{}\" ({}), got \"{}\"",
                      kMovielensOp, path, line_no, sep, sep == "," ? kCsvHeader : "user::movie::rating::timestamp",
                      line);
    std::int64_t user = 0, item = 0, time = 0;
    float rating = 0;
    const bool ok[4] = {detail::parse_csv_int64(f[0], user), detail::parse_csv_int64(f[1], item),
                        detail::parse_csv_float(f[2], rating) && rating >= 0.f && rating <= 5.f,
                        detail::parse_csv_int64(f[3], time)};
    for (int i = 0; i < 4; ++i)
      KERASCPP_CHECK_IO(ok[i], "{}: '{}' line {}: the {} \"{}\" is not {}", kMovielensOp, path, line_no, kNames[i],
                        f[i], i == 2 ? "a number from 0 to 5" : "an integer");
    users.push_back(user);
    items.push_back(item);
    ratings.push_back(rating);
    times.push_back(time);
  }
  KERASCPP_CHECK_IO(!users.empty(), "{}: '{}' holds no ratings", kMovielensOp, path);
  const auto n = static_cast<std::int64_t>(users.size());
  return {Tensor::from_vector({n}, users), Tensor::from_vector({n}, items), Tensor::from_vector({n}, ratings),
          Tensor::from_vector({n}, times)};
}

LeaveOneOutSplit leave_one_out_split(const MovieLensRatings& r, std::int64_t min_ratings) {
  const std::int64_t n = r.user_id.numel();
  KERASCPP_CHECK_SHAPE(r.item_id.numel() == n && r.timestamp.numel() == n,
                       "leave_one_out_split: user_id, item_id and timestamp must have one entry per rating, "
                       "got {}, {} and {}",
                       n, r.item_id.numel(), r.timestamp.numel());
  KERASCPP_CHECK_VALUE(min_ratings >= 1, "leave_one_out_split: min_ratings must be >= 1, got {}", min_ratings);
  const auto* user = r.user_id.data<std::int64_t>();
  const auto* item = r.item_id.data<std::int64_t>();
  const auto* time = r.timestamp.data<std::int64_t>();
  std::unordered_map<std::int64_t, std::int64_t> count;
  for (std::int64_t i = 0; i < n; ++i) ++count[user[i]];
  // New numbers in order of first appearance among the kept ratings, as pandas' unique() gives.
  LeaveOneOutSplit s;
  std::unordered_map<std::int64_t, std::int32_t> user_no, item_no;
  std::vector<std::vector<std::int64_t>> rows;  // per new user: its ratings' indices
  for (std::int64_t i = 0; i < n; ++i) {
    if (count[user[i]] < min_ratings) continue;
    auto [u, new_user] = user_no.try_emplace(user[i], static_cast<std::int32_t>(s.user_ids.size()));
    if (new_user) s.user_ids.push_back(user[i]), rows.emplace_back();
    if (item_no.try_emplace(item[i], static_cast<std::int32_t>(s.item_ids.size())).second)
      s.item_ids.push_back(item[i]);
    rows[static_cast<std::size_t>(u->second)].push_back(i);
  }
  KERASCPP_CHECK_VALUE(!s.user_ids.empty(), "leave_one_out_split: no user has {} or more ratings", min_ratings);
  s.num_users = static_cast<std::int64_t>(s.user_ids.size());
  s.num_items = static_cast<std::int64_t>(s.item_ids.size());
  s.train_items.resize(rows.size());
  s.held_out.resize(rows.size());
  for (std::size_t u = 0; u < rows.size(); ++u) {
    auto& idx = rows[u];
    // Oldest first; a stable sort keeps file order among equal times, so the last is held out.
    std::stable_sort(idx.begin(), idx.end(), [&](std::int64_t a, std::int64_t b) { return time[a] < time[b]; });
    s.held_out[u] = item_no.at(item[idx.back()]);
    for (std::size_t k = 0; k + 1 < idx.size(); ++k) s.train_items[u].push_back(item_no.at(item[idx[k]]));
  }
  return s;
}

}  // namespace kerascpp::data
