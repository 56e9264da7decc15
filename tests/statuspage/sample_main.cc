// statuspage-sample FILE: writes the status page of a realistic sample model (sample_page.h) to
// FILE, for the in-Chromium test and for a look at the page without a cluster.
#include <fstream>
#include <iostream>

#include "sample_page.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: statuspage-sample FILE\n";
    return 2;
  }
  std::ofstream out(argv[1], std::ios::binary);
  out << rota::statuspage::RenderStatusPage(rota::statuspage::testing::SamplePage());
  out.close();
  if (!out) {
    std::cerr << "statuspage-sample: cannot write " << argv[1] << "\n";
    return 1;
  }
  return 0;
}
