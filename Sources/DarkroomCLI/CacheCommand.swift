import ArgumentParser
import Darkroom
import FoundationEssentials

struct CacheCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "cache",
    abstract: "Inspect and trim the rendition cache.",
    discussion: prose(
      """
      Without --cache-dir, the cache is the one a file in the current folder would
      use: the enclosing library's .darkroom/cache, else $XDG_CACHE_HOME/darkroom,
      else ~/.cache/darkroom.

      Examples:
        darkroom cache stats --json
        darkroom cache prune --cache-limit 200M
        darkroom cache clear
      """),
    subcommands: [Stats.self, Prune.self, Clear.self])

  struct Stats: ParsableCommand {
    static let configuration = CommandConfiguration(
      abstract: "Show the cache's folder, entries and size.")
    @OptionGroup var cacheOptions: CacheOptions
    @Flag(help: "Print JSON.") var json = false

    func run() throws {
      let stats = Library.cacheStats(cacheOptions.settings, near: currentFolderFile)
      if json {
        print(try jsonText(stats))
      } else {
        print("folder   \(stats.folder)")
        print("entries  \(stats.entries)")
        print("size     \(stats.bytes) bytes (limit \(stats.limitBytes))")
      }
    }
  }

  struct Prune: ParsableCommand {
    static let configuration = CommandConfiguration(
      abstract: "Evict least recently used renditions down to --cache-limit.")
    @OptionGroup var cacheOptions: CacheOptions

    func run() throws {
      let (before, remaining) = Library.pruneCache(cacheOptions.settings, near: currentFolderFile)
      print(
        "pruned \(before.bytes - remaining) bytes; \(remaining) bytes remain in \(before.folder)")
    }
  }

  struct Clear: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Remove every cached rendition.")
    @OptionGroup var cacheOptions: CacheOptions

    func run() throws {
      let folder = try Library.clearCache(cacheOptions.settings, near: currentFolderFile)
      print("cleared \(folder.path)")
    }
  }
}

/// The current folder: its library's cache is the one these commands act on.
private var currentFolderFile: String {
  FileManager.default.currentDirectoryPath
}
