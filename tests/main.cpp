// doctest entry point for the unit suite (every tests/*.cpp joins this binary).
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>
