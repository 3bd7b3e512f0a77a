/* The deal.II bridge of tpmg: exceptions.
 *
 * Every class of tpmg::dealii reports errors by throwing one of these
 * exceptions (derived from dealii::ExceptionBase, so that deal.II prints them
 * as its own): ExcTpmgError when a call of the C library fails, with the
 * library's status and message; ExcUnsupported when a mesh, element, vector or
 * parallel layout is outside what tpmg solves, with a message naming it; and
 * ExcHierarchyMismatch when tpmg's data and deal.II's disagree.
 */
#ifndef tpmg_dealii_exceptions_h
#define tpmg_dealii_exceptions_h

#include <deal.II/base/exceptions.h>

#include <tpmg.h>

#include <ostream>
#include <string>
#include <utility>

namespace tpmg::dealii
{
  /**
   * The name of a status as spelled in tpmg.h, e.g. "TPMG_ERROR_ARGUMENT".
   */
  inline const char *
  status_name(const tpmg_status status)
  {
    switch (status)
      {
        case TPMG_SUCCESS:
          return "TPMG_SUCCESS";
        case TPMG_ERROR_ARGUMENT:
          return "TPMG_ERROR_ARGUMENT";
        case TPMG_ERROR_UNSUPPORTED:
          return "TPMG_ERROR_UNSUPPORTED";
        case TPMG_ERROR_MEMORY:
          return "TPMG_ERROR_MEMORY";
        case TPMG_ERROR_BACKEND:
          return "TPMG_ERROR_BACKEND";
        case TPMG_ERROR_NUMERICAL:
          return "TPMG_ERROR_NUMERICAL";
      }
    return "unknown tpmg_status";
  }



  /**
   * A call of the tpmg C library failed. Carries the name of the call, its
   * status and the message the library left in its context.
   */
  class ExcTpmgError : public ::dealii::ExceptionBase
  {
  public:
    ExcTpmgError(std::string       call,
                 const tpmg_status status,
                 std::string       message)
      : call(std::move(call))
      , status(status)
      , message(std::move(message))
    {}

    void
    print_info(std::ostream &out) const override
    {
      out << "    tpmg call " << call << " failed with " << status_name(status);
      if (!message.empty())
        out << ": " << message;
      out << std::endl;
    }

    /** The status the library returned. */
    tpmg_status
    get_status() const
    {
      return status;
    }

  private:
    const std::string call;
    const tpmg_status status;
    const std::string message;
  };



  /**
   * Something tpmg does not solve: a mesh that is not a globally refined
   * subdivided_hyper_rectangle, an element other than a scalar FE_Q(k) in the
   * supported range, a vector in a memory space the context cannot read. The message says what is
   * unsupported and why.
   */
  class ExcUnsupported : public ::dealii::ExceptionBase
  {
  public:
    explicit ExcUnsupported(std::string what_is_unsupported)
      : what_is_unsupported(std::move(what_is_unsupported))
    {}

    void
    print_info(std::ostream &out) const override
    {
      out << "    tpmg::dealii does not support this: " << what_is_unsupported
          << std::endl;
    }

    /** What is unsupported, as given to the constructor. */
    const std::string &
    get_message() const
    {
      return what_is_unsupported;
    }

  private:
    const std::string what_is_unsupported;
  };



  /**
   * deal.II's data and tpmg's disagree (Hierarchy::cross_check()): a DoF
   * numbering that is not lexicographic, boundary indices or prolongation
   * entries that differ. The message names the first difference.
   */
  class ExcHierarchyMismatch : public ::dealii::ExceptionBase
  {
  public:
    explicit ExcHierarchyMismatch(std::string difference)
      : difference(std::move(difference))
    {}

    void
    print_info(std::ostream &out) const override
    {
      out << "    tpmg and deal.II disagree: " << difference << std::endl;
    }

    /** The difference, as given to the constructor. */
    const std::string &
    get_message() const
    {
      return difference;
    }

  private:
    const std::string difference;
  };



  /**
   * Throw ExcTpmgError if @p status is not TPMG_SUCCESS, with the message the
   * library left in @p context (which may be nullptr where the call has no
   * context to write to).
   */
  inline void
  check_status(const tpmg_status   status,
               const tpmg_context *context,
               const char         *call)
  {
    AssertThrow(status == TPMG_SUCCESS,
                ExcTpmgError(call,
                             status,
                             context != nullptr ?
                               tpmg_context_last_error(context) :
                               ""));
  }
} // namespace tpmg::dealii

#endif
