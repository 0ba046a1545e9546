// index_image_directory: Keras' index_directory (keras/src/utils/dataset_utils.py) over the local
// file system: the same files, order, labels and class names, and the same global shuffle, so
// that a seed splits a folder into the same training and validation files as Keras does.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <random>
#include <set>
#include <system_error>

#include "check.hpp"
#include "kerascpp/data/image_dataset.hpp"
#include "kerascpp/error.hpp"

namespace kerascpp::data {
namespace {

namespace fs = std::filesystem;
constexpr const char* kImageDirectoryIndexOp = "image_dataset_from_directory";

// Keras' ALLOWLIST_FORMATS, compared with the name lower-cased.
bool has_image_extension(std::string name) {
  std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
  for (const char* ext : {".bmp", ".gif", ".jpeg", ".jpg", ".png"}) {
    const std::string e(ext);
    if (name.size() >= e.size() && name.compare(name.size() - e.size(), e.size(), e) == 0) return true;
  }
  return false;
}

// Python's os.path.join(a, b) for a relative b.
std::string join(const std::string& a, const std::string& b) {
  if (a.empty()) return b;
  return a.back() == '/' ? a + b : a + "/" + b;
}

bool is_dir(const fs::directory_entry& e) {
  std::error_code ec;
  return e.is_directory(ec);  // follows symlinks, as os.walk's entry.is_dir()
}

// os.walk(root, followlinks): every folder reached (root included) with its file names; a symlink
// to a folder is a folder, walked only with follow_links; anything else is a file.
void walk(const std::string& root, bool follow_links,
          std::vector<std::pair<std::string, std::vector<std::string>>>& out) {
  std::error_code ec;
  fs::directory_iterator it(root, ec);
  KERASCPP_CHECK_IO(!ec, "{}: cannot read the folder '{}': {}", kImageDirectoryIndexOp, root, ec.message());
  std::vector<std::string> files, dirs;
  for (const fs::directory_entry& e : it) {
    const std::string name = e.path().filename().string();
    if (!is_dir(e)) {
      files.push_back(name);
    } else if (follow_links || !e.is_symlink(ec)) {
      dirs.push_back(name);
    }
  }
  out.emplace_back(root, std::move(files));
  for (const std::string& d : dirs) walk(join(root, d), follow_links, out);
}

// index_subdirectory: the image files under `dir`, as paths relative to `dir`'s parent named
// `prefix` (the class folder name, or "" when labels are not inferred), in Keras' order: folders
// sorted by path, files by name (byte order, which is code point order for UTF-8, as Python sorts).
std::vector<std::string> image_files_under(const std::string& dir, const std::string& prefix, bool follow_links) {
  std::vector<std::pair<std::string, std::vector<std::string>>> folders;
  walk(dir, follow_links, folders);
  std::sort(folders.begin(), folders.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<std::string> out;
  for (auto& [root, files] : folders) {
    std::sort(files.begin(), files.end());
    const std::string rel = root.size() > dir.size() ? root.substr(dir.size() + (dir.back() == '/' ? 0 : 1)) : "";
    for (const std::string& f : files)
      if (has_image_extension(f)) out.push_back(join(prefix, join(rel, f)));
  }
  return out;
}

// numpy's legacy RandomState(seed).shuffle: Fisher-Yates from the end, each index drawn from
// MT19937 (seeded as std::mt19937 is) by masked rejection, as numpy's random_interval does.
template <class T>
void numpy_shuffle(std::vector<T>& v, std::uint32_t seed) {
  std::mt19937 rng(seed);
  for (std::size_t i = v.size(); i-- > 1;) {
    std::uint32_t mask = static_cast<std::uint32_t>(i);
    for (int s : {1, 2, 4, 8, 16}) mask |= mask >> s;
    std::uint32_t j;
    do j = static_cast<std::uint32_t>(rng()) & mask;
    while (j > i);
    std::swap(v[i], v[j]);
  }
}

}  // namespace

ImageDirectoryIndex index_image_directory(const std::string& directory, const std::optional<ImageLabels>& labels,
                                          const std::vector<std::string>& class_names, bool shuffle, std::uint64_t seed,
                                          bool follow_links) {
  std::error_code ec;
  KERASCPP_CHECK_IO(fs::is_directory(directory, ec), "{}: '{}' is not a folder{}", kImageDirectoryIndexOp, directory,
                    fs::exists(directory, ec) ? "" : " (it does not exist)");
  KERASCPP_CHECK_VALUE(seed <= 0xffffffffu, "{}: seed must be between 0 and 2**32 - 1 (numpy's limit), got {}",
                       kImageDirectoryIndexOp, seed);
  const bool inferred = labels && std::holds_alternative<std::string>(*labels);
  KERASCPP_CHECK_VALUE(!inferred || std::get<std::string>(*labels) == "inferred",
                       "{}: labels must be \"inferred\", a list of integer labels (one per file) or "
                       "std::nullopt (no labels), got \"{}\"",
                       kImageDirectoryIndexOp, std::get<std::string>(*labels));
  ImageDirectoryIndex index;
  std::vector<std::string> subdirs;
  if (inferred) {
    for (const fs::directory_entry& e : fs::directory_iterator(directory, ec)) {
      const std::string name = e.path().filename().string();
      if (is_dir(e) && name.front() != '.') subdirs.push_back(name);
    }
    KERASCPP_CHECK_IO(!ec, "{}: cannot read the folder '{}': {}", kImageDirectoryIndexOp, directory, ec.message());
    std::sort(subdirs.begin(), subdirs.end());
    if (!class_names.empty()) {
      const std::set<std::string> present(subdirs.begin(), subdirs.end());
      for (const std::string& c : class_names)
        KERASCPP_CHECK_VALUE(present.count(c),
                             "{}: class_names must name sub-folders of '{}'; '{}' is not one (found: [{}])",
                             kImageDirectoryIndexOp, directory, c, fmt::join(subdirs, ", "));
      subdirs = class_names;  // the order given
    }
    index.class_names = subdirs;
    for (std::size_t c = 0; c < subdirs.size(); ++c) {
      auto files = image_files_under(join(directory, subdirs[c]), subdirs[c], follow_links);
      index.labels.insert(index.labels.end(), files.size(), static_cast<std::int64_t>(c));
      index.file_paths.insert(index.file_paths.end(), files.begin(), files.end());
    }
  } else {
    KERASCPP_CHECK_VALUE(class_names.empty(),
                         "{}: class_names can only be given with labels \"inferred\"; with a list of labels "
                         "the class names are the sorted labels",
                         kImageDirectoryIndexOp);
    index.file_paths = image_files_under(directory, "", follow_links);
    if (labels) {
      index.labels = std::get<std::vector<std::int64_t>>(*labels);
      KERASCPP_CHECK_VALUE(index.labels.size() == index.file_paths.size(),
                           "{}: {} labels were given for the {} image files in '{}'; give one per file, in "
                           "alphanumeric order of their paths",
                           kImageDirectoryIndexOp, index.labels.size(), index.file_paths.size(), directory);
      const std::set<std::int64_t> distinct(index.labels.begin(), index.labels.end());
      for (std::int64_t l : distinct) index.class_names.push_back(std::to_string(l));
    }
  }
  for (std::string& p : index.file_paths) p = join(directory, p);
  if (shuffle) {
    // Keras shuffles paths and labels with two generators of the same seed: the same permutation.
    numpy_shuffle(index.file_paths, static_cast<std::uint32_t>(seed));
    numpy_shuffle(index.labels, static_cast<std::uint32_t>(seed));
  }
  return index;
}

}  // namespace kerascpp::data
