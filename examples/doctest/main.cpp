// The doctest runner: exactly one file of the test binary defines the main().
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>
