/* Shared helpers of the deal.II bridge tests: checks that print what was
 * expected and what came, and the meshes the tests use. */
#ifndef TPMG_BRIDGE_TEST_H
#define TPMG_BRIDGE_TEST_H

#include <deal.II/base/exceptions.h>
#include <deal.II/base/point.h>

#include <deal.II/grid/grid_generator.h>
#include <deal.II/grid/tria.h>

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

namespace bridge_test
{
  inline int n_failures = 0;

  /** Record a failure with its location and message. */
  inline void
  fail(const char *file, const int line, const std::string &message)
  {
    std::cerr << file << ":" << line << ": " << message << std::endl;
    ++n_failures;
  }

  /** Exit status of the test: 0 if nothing failed. */
  inline int
  result()
  {
    return n_failures == 0 ? 0 : 1;
  }

  /** @p text with every run of white space made one blank. */
  inline std::string
  squeeze(const std::string &text)
  {
    std::string result;
    for (const char c : text)
      if (!std::isspace(static_cast<unsigned char>(c)))
        result += c;
      else if (!result.empty() && result.back() != ' ')
        result += ' ';
    return result;
  }

  /** Whether @p text contains @p part, up to white space (deal.II wraps
   *  exception messages into lines). */
  inline bool
  contains(const std::string &text, const std::string &part)
  {
    return squeeze(text).find(squeeze(part)) != std::string::npos;
  }

  /**
   * The mesh of the tests: subdivided_hyper_rectangle with @p cells between
   * @p lower and @p upper, refined @p refinements times.
   */
  template <int dim>
  void
  make_mesh(dealii::Triangulation<dim>      &tria,
            const std::vector<unsigned int> &cells,
            const dealii::Point<dim>        &lower,
            const dealii::Point<dim>        &upper,
            const unsigned int               refinements)
  {
    dealii::GridGenerator::subdivided_hyper_rectangle(tria,
                                                      cells,
                                                      lower,
                                                      upper);
    tria.refine_global(refinements);
  }
} // namespace bridge_test

/** Check a condition; on failure print it and the streamed message. */
#define BRIDGE_CHECK(cond, message)                                          \
  do                                                                         \
    {                                                                        \
      if (!(cond))                                                           \
        {                                                                    \
          std::ostringstream bridge_check_stream_;                           \
          bridge_check_stream_ << "check '" #cond "' failed: " << message;   \
          bridge_test::fail(__FILE__, __LINE__, bridge_check_stream_.str()); \
        }                                                                    \
    }                                                                        \
  while (false)

/** Expect that @p statement throws an exception of type @p Exc whose what()
 *  contains @p part. */
#define BRIDGE_CHECK_THROWS(statement, Exc, part)                        \
  do                                                                     \
    {                                                                    \
      std::string bridge_what_;                                          \
      bool        bridge_right_type_ = false, bridge_thrown_ = false;    \
      try                                                                \
        {                                                                \
          statement;                                                     \
        }                                                                \
      catch (const Exc &e)                                               \
        {                                                                \
          bridge_thrown_     = true;                                     \
          bridge_right_type_ = true;                                     \
          bridge_what_       = e.what();                                 \
        }                                                                \
      catch (const std::exception &e)                                    \
        {                                                                \
          bridge_thrown_ = true;                                         \
          bridge_what_   = e.what();                                     \
        }                                                                \
      BRIDGE_CHECK(bridge_thrown_, "'" #statement "' did not throw");    \
      BRIDGE_CHECK(!bridge_thrown_ || bridge_right_type_,                \
                   "'" #statement "' threw another type than " #Exc ": " \
                     << bridge_what_);                                   \
      BRIDGE_CHECK(!bridge_thrown_ ||                                    \
                     bridge_test::contains(bridge_what_, part),          \
                   "the message of '" #statement "' does not name '"     \
                     << (part) << "':\n"                                 \
                     << bridge_what_);                                   \
    }                                                                    \
  while (false)

#endif
