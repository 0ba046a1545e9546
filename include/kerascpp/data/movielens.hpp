// MovieLens ratings (ml-1m/ratings.dat, ml-20m/ratings.csv) and the official NCF model's
// leave-one-out split (official/recommendation/data_preprocessing.py).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "kerascpp/tensor/tensor.hpp"

namespace kerascpp::data {

/// One entry per rating, in file order: user and movie ids as MovieLens numbers them.
struct MovieLensRatings {
  Tensor user_id;    ///< int64 (N,)
  Tensor item_id;    ///< int64 (N,)
  Tensor rating;     ///< float32 (N,): 1-5 (ml-1m), 0.5-5 in halves (ml-20m)
  Tensor timestamp;  ///< int64 (N,): seconds since 1970
};

/// Reads "user::movie::rating::timestamp" lines (ml-1m's ratings.dat) or, when the first line is
/// the header userId,movieId,rating,timestamp, ml-20m's ratings.csv. IOError names file, line, field.
MovieLensRatings read_movielens_ratings(const std::string& path);

/// The official NCF preprocessing: users with fewer than min_ratings ratings dropped, users and
/// items renumbered from 0 in order of first appearance, each user's latest rating held out.
struct LeaveOneOutSplit {
  /// @{
  /// Users and items after renumbering.
  std::int64_t num_users = 0, num_items = 0;
  /// @}
  std::vector<std::vector<std::int32_t>> train_items;  ///< per user, oldest first (without the held-out one)
  std::vector<std::int32_t> held_out;                  ///< per user: the item rated last
  /// @{
  /// MovieLens id of each new user / item number.
  std::vector<std::int64_t> user_ids, item_ids;
  /// @}
};
/// Ties in time go to the rating later in the file; a user with one rating keeps no training item.
LeaveOneOutSplit leave_one_out_split(const MovieLensRatings& ratings, std::int64_t min_ratings = 20);

}  // namespace kerascpp::data
