// Package treecheck holds tests of the repository itself, not of fred: the
// tracked files name no network address and no path of the checkout they
// were made in. Mirrors and proxies come from the machine's own
// configuration, and test data does not depend on where the repository is
// cloned.
package treecheck
