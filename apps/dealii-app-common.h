/* What the deal.II programs dealii-poisson and dealii-compare share beyond
 * tpmg-app-common.h: an exception as one line for their error messages. */
#ifndef TPMG_DEALII_APP_COMMON_H
#define TPMG_DEALII_APP_COMMON_H

#include <deal.II/base/exceptions.h>

#include <exception>
#include <sstream>
#include <string>

namespace DealiiApp
{
  // An exception as one line: deal.II's exceptions print several, with the
  // place they were thrown from; the message is what the user needs.
  inline std::string
  one_line(const std::exception &exc)
  {
    std::ostringstream text;
    if (const auto *e = dynamic_cast<const dealii::ExceptionBase *>(&exc))
      {
        e->print_info(text);
        if (text.str().find_first_not_of(" \n") == std::string::npos)
          text << e->get_exc_name();
      }
    else
      text << exc.what();
    std::string        line, word;
    std::istringstream words(text.str());
    while (words >> word)
      line += (line.empty() ? "" : " ") + word;
    return line;
  }
} // namespace DealiiApp

#endif
