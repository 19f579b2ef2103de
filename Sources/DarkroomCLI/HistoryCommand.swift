import ArgumentParser
import Darkroom
import FoundationEssentials

struct HistoryCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "history",
    abstract: "List the versions of an edited file and their filters.",
    discussion: "Version 0 is the original; `darkroom revert --to N` restores version N.")

  @Argument(help: "An edited file.")
  var file: String

  @Flag(help: "Print the versions' adjustment data as a JSON array, oldest first.")
  var json = false

  func run() throws {
    let history = try Library.editHistory(ofFile: try Library.resolve(file))
    let versions = history.versions
    if json {
      print(
        "["
          + versions.map { String(decoding: $0.canonicalJSON, as: UTF8.self) }.joined(
            separator: ",") + "]")
      return
    }
    guard let first = versions.first else {
      print("\(file): not edited")
      return
    }
    // `*` marks the version the file holds now; versions after it can be restored with
    // revert --to until a new edit branches off.
    func mark(_ version: Int) -> String { version == history.current ? "*" : " " }
    print("\(mark(0))0  original  \(first.original.fileName)  sha256 \(first.original.sha256)")
    for version in versions {
      let filters = version.graph.nodes.map(\.text).joined(separator: " | ")
      print(
        "\(mark(version.version))\(version.version)  \(version.created)  \(filters)  sha256 \(version.result.sha256)"
      )
    }
  }
}
