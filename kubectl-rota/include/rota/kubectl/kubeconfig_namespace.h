#pragma once

// The default namespace of a kubeconfig context (contexts[].context.namespace), which
// apiclient::LoadKubeconfig does not report. Files and precedence as LoadKubeconfig reads them:
// `paths` colon-separated (default $KUBECONFIG, else ~/.kube/config), the first file to name a
// context or the current-context wins.

#include <string>

namespace rota::kubectl {

// The namespace of `context` (empty: the current context), or "default" when it names none or the
// files cannot be read (LoadKubeconfig reports those errors).
std::string ContextNamespace(const std::string& paths, const std::string& context);

}  // namespace rota::kubectl
