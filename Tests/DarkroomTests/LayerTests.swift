import Foundation
import Testing

/// The shape of the code, checked so that it stays: the engine's folders form layers (no
/// cycle), each C library is reached from one folder, and the faces (the command line and
/// the server) parse, call `Library` and print, naming none of the engine's inner parts.
@Suite("Layers", .timeLimit(.minutes(5)), .offThePool)
struct LayerTests {
  static let sources = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    .appendingPathComponent("../../Sources").standardizedFileURL.path

  /// Swift files under `folder`, by path relative to it, with comments and string literals
  /// taken out (a type named in a sentence is no use of it).
  static func code(under folder: String) throws -> [String: String] {
    var files: [String: String] = [:]
    let root = sources + "/" + folder
    for path in try FileManager.default.subpathsOfDirectory(atPath: root)
    where path.hasSuffix(".swift") {
      let text = try String(contentsOfFile: root + "/" + path, encoding: .utf8)
      files[path] = text.replacing(/"""[\s\S]*?"""/, with: "\"\"")
        .replacing(/"(?:[^"\\\n]|\\.)*"/, with: "\"\"").replacing(/\/\/[^\n]*/, with: "")
    }
    return files
  }

  /// The capitalised names a text uses, not as members (`x.Name`).
  static func names(in text: String) -> Set<String> {
    Set(text.matches(of: /(?:^|[^\w.])([A-Z]\w*)/).map { String($0.1) })
  }

  /// Folder A uses folder B when a file in A names a type declared at the top level of B.
  static func folderGraph() throws -> [String: [String: Set<String>]] {
    let files = try code(under: "Darkroom")
    func folder(_ path: String) -> String {
      path.contains("/") ? String(path.prefix { $0 != "/" }) : "."
    }
    var declared: [String: String] = [:]
    let declaration =
      /(?m)^(?:public |package |internal |final |@\w+ )*(?:struct|class|enum|protocol|actor|typealias)\s+(\w+)/
    for (path, text) in files {
      for match in text.matches(of: declaration) { declared[String(match.1)] = folder(path) }
    }
    var uses: [String: [String: Set<String>]] = [:]
    for (path, text) in files {
      let from = folder(path)
      for word in Self.names(in: text) {
        guard let to = declared[word], to != from, to != "." else { continue }
        uses[from, default: [:]][to, default: []].insert("\(word) in \(path)")
      }
    }
    return uses
  }

  @Test("the engine's folders form layers: no folder reaches itself through others")
  func noCycle() throws {
    let graph = try Self.folderGraph()
    #expect(graph.count > 10, "the graph was read: \(graph.keys.sorted())")
    // Depth-first search from each folder; a path back to the start is a cycle.
    for start in Array(graph.keys).sorted() {
      var stack: [(String, [String])] = [(start, [start])]
      var seen: Set<String> = []
      while let (folder, path) = stack.popLast() {
        for next in Array((graph[folder] ?? [:]).keys).sorted() {
          if next == start {
            let edges = zip(path, path.dropFirst() + [start]).map { a, b in
              "\(a) -> \(b) (\(graph[a]?[b]?.sorted().prefix(2).joined(separator: ", ") ?? ""))"
            }
            Issue.record("a cycle: \(edges.joined(separator: "; "))")
            return
          }
          if seen.insert(next).inserted { stack.append((next, path + [next])) }
        }
      }
    }
  }

  /// The engine's folders, lowest first: a folder names types of its own layer or lower
  /// ones only (issue 57).
  static let layers: [Set<String>] = [
    ["Concurrency", "Documents", "Files"], ["Exif", "Places", "Assets"], ["Catalog", "Cache"],
    ["Vips"], ["Filters"], ["Rendering"], ["Editing"], ["Batch", "Workers"], ["Spaces"],
    ["Library"],
  ]

  @Test(
    "the folders stand in their layers' order: Concurrency/Documents/Files < Exif/Places/Assets < Catalog/Cache < Vips < Filters < Rendering < Editing < Batch/Workers < Spaces < Library"
  )
  func layerOrder() throws {
    let graph = try Self.folderGraph()
    let folders = Set(graph.keys).union(graph.values.flatMap(\.keys))
    let rank = Dictionary(
      uniqueKeysWithValues: Self.layers.enumerated().flatMap { index, layer in
        layer.map { ($0, index) }
      })
    #expect(folders.subtracting(rank.keys).isEmpty, "a folder with no layer: \(folders)")
    for (from, uses) in graph {
      for (to, names) in uses {
        guard let a = rank[from], let b = rank[to] else { continue }
        #expect(b <= a, "\(from) (layer \(a)) names \(to) (layer \(b)): \(names.sorted())")
      }
    }
  }

  @Test("each C library is imported by one folder")
  func cLibraries() throws {
    // CVideo: Rendering/VideoFrame.swift and Rendering/VideoTranscode.swift.
    let owners = [
      "CVipsShim": "Vips/", "CSandbox": "Workers/", "CSodium": "Spaces/", "CExif": "Exif/",
      "CHamming": "Library/Duplicates.swift", "CVideo": "Rendering/Video",
      "CRaw": "Rendering/RawFile.swift",
      "CPostgres": "Catalog/Postgres/PostgresConnection.swift",
      "CInflate": "Filters/DarktableModules.swift",
    ]
    for face in ["DarkroomCLI", "DarkroomServer", "Darkroom"] {
      for (path, text) in try Self.code(under: face) {
        for (module, owner) in owners where text.contains("import \(module)") {
          #expect(face == "Darkroom" && path.hasPrefix(owner), "\(face)/\(path) imports \(module)")
        }
      }
    }
  }

  @Test("only Library/ finds a library by walking up from a path; the parts below are given it")
  func noLookupsBelowLibrary() throws {
    for (path, text) in try Self.code(under: "Darkroom") where !path.hasPrefix("Library/") {
      for lookup in ["DarkroomFolder.root(", "Library.containing(", "OriginalStore.nearest("] {
        #expect(!text.contains(lookup), "Darkroom/\(path) looks a library up: \(lookup)")
      }
    }
  }

  @Test(
    "the public surface is the kept list (Tests/DarkroomTests/PublicTypes.txt), at most 60 types, and no public function outside a type"
  )
  func publicSurface() throws {
    let listed = try String(
      contentsOfFile: URL(fileURLWithPath: #filePath).deletingLastPathComponent().path
        + "/PublicTypes.txt", encoding: .utf8
    ).split(separator: "\n").filter { !$0.hasPrefix("#") }.map(String.init)
    let declaration =
      /(?m)^\s*(?:@\w+ )*public (?:final |indirect )?(?:struct|class|enum|protocol|actor|typealias) (\w+)/
    var found: [String] = []
    for (path, text) in try Self.code(under: "Darkroom") {
      found += text.matches(of: declaration).map { "\(path) \($0.1)" }
      #expect(
        text.matches(of: #/(?m)^public (?:func|let|var) /#).isEmpty,
        "Darkroom/\(path) has a public function or value outside a type")
    }
    let (kept, now) = (Set(listed), Set(found))
    #expect(
      now.subtracting(kept).isEmpty, "public, not in the list: \(now.subtracting(kept).sorted())")
    #expect(kept.subtracting(now).isEmpty, "listed, not public: \(kept.subtracting(now).sorted())")
    #expect(found.count == now.count, "a type declared public twice in one file")
    #expect(now.count <= 60, "\(now.count) public types")
  }

  @Test("the faces name none of the engine's inner parts")
  func thinFaces() throws {
    // These are how the engine does its work: faces hand it settings (`PixelSettings`,
    // `CacheSettings`) and call `Library` or `LibraryJob`; `Space` for a space's keys and
    // password only (what is in a space is reached through `Library(space:)`).
    let inner = [
      "WorkerPool", "Renderer", "Editor", "RenditionCache", "OriginalStore", "SQLiteCatalog",
      "VipsImage", "Representations", "RenderQueue", "RenditionMemory", "BatchRunner", "Scanner",
      "SpaceAsset", "SealedCatalog", "PostgresCatalog", "PostgresConnection",
    ]
    for face in ["DarkroomCLI", "DarkroomServer"] {
      for (path, text) in try Self.code(under: face) {
        let words = Self.names(in: text)
        for name in inner where words.contains(name) {
          Issue.record("\(face)/\(path) names \(name)")
        }
      }
    }
  }

  @Test(
    "the server's routes are tables of about a line a route: each collection (or router's `add`) at most 60 lines"
  )
  func shortRouteTables() throws {
    var tables: [String: Int] = [:]
    var routes = 0
    for (path, text) in try Self.code(under: "DarkroomServer") {
      let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
      for (index, line) in lines.enumerated() {
        guard
          line.contains("func add(to router:")
            || (line.contains("func ") && line.contains("Routes(") && line.contains(") -> "))
        else {
          continue
        }
        // (swift-format puts a function's closing brace at its own indentation.)
        let indent = line.prefix { $0 == " " }
        let end = try #require(lines[(index + 1)...].firstIndex { $0 == indent + "}" })
        tables["\(path):\(index + 1)"] = end - index + 1
        routes += lines[index...end].count { $0.contains("routes.") && $0.contains("{") }
      }
    }
    #expect(tables.count >= 10, "\(tables)")
    #expect(tables.filter { $0.value > 60 } == [:])
    // (The collections hold the routes: over 35 lines of them, a space's assets being the
    // API's asset routes mounted again.)
    #expect(routes > 35, "\(routes)")
  }
}
