import Darkroom
import Foundation

/// An asset as the API shows it: the catalog's fields, and `version`, the first 12 hex
/// digits of its content hash (and, for an asset edited elsewhere, of its settings': a
/// sidecar changes what its renditions show, not the file), which a representation URL
/// carries to be cached for good. No server path: files are named relative to the library.
struct APIAsset: Encodable, Sendable {
  var asset: Asset
  /// Its renditions' signatures, where the server hands them out (`--signed-renditions`).
  var signed: APISignatures?

  init(_ asset: Asset, signed: APISignatures? = nil) { (self.asset, self.signed) = (asset, signed) }

  /// The version of the asset `id` (nil: none, or one the catalog no longer has).
  static func version(of id: AssetID?, in library: Library) -> String? {
    id.flatMap { (try? library.asset($0))?.version }
  }

  func encode(to encoder: Encoder) throws {
    try asset.encode(to: encoder)
    var container = encoder.container(keyedBy: Key.self)
    try container.encode(asset.version, forKey: .version)
    try container.encodeIfPresent(signed, forKey: .signed)
    if asset.foreignSettings != nil {
      let shown = asset.shownSize
      try container.encode(shown.width, forKey: .shownWidth)
      try container.encode(shown.height, forKey: .shownHeight)
    }
  }
  enum Key: String, CodingKey { case version, signed, shownWidth, shownHeight }
}

/// A page of assets: `next` is the `after` of the next page (absent on the last).
struct APIAssets<Item: Encodable & Sendable>: Encodable, Sendable {
  var assets: [Item]
  /// On a first page only (no `after`).
  var count: Int?
  var next: String?
}

/// How many assets a query holds in each month: the timeline's sections.
struct APITimeline: Encodable, Sendable {
  struct Month: Encodable, Sendable {
    var month: String
    var count: Int
  }
  var count: Int
  var months: [Month]
  init(_ months: [MonthCount]) {
    count = months.reduce(0) { $0 + $1.count }
    self.months = months.map { Month(month: AssetQuery.monthText($0.month), count: $0.count) }
  }
}

/// The map's markers: clusters of photos, each with its poster's `version` for its URL.
struct APIMapCluster: Encodable, Sendable {
  var latitude: Double
  var longitude: Double
  var count: Int
  var poster: String?
  var version: String?
  init(_ cluster: MapCluster, version: String?) {
    (latitude, longitude, count) = (cluster.latitude, cluster.longitude, cluster.count)
    poster = cluster.poster?.rawValue
    self.version = version
  }
}

struct APIMap: Encodable, Sendable {
  var clusters: [APIMapCluster]
}

struct APIPlaces: Encodable, Sendable {
  var places: [PlaceCount]
}

struct APIAlbums: Encodable, Sendable {
  var albums: [Album]
}

struct APIAdjustment: Encodable, Sendable {
  var version: Int
  var filters: [String]
  var graph: FilterGraph
  var created: String
  /// After an edit: the asset that holds the result (the one edited, or a camera RAW's
  /// `NAME-Edit.jpg`, catalogued as its own).
  var asset: String?
  init(_ data: AdjustmentData) {
    version = data.version
    filters = data.graph.nodes.map(\.text)
    graph = data.graph
    created = data.created
  }
}

struct APIHistory: Encodable, Sendable {
  /// The version the file is at now (0: the original).
  var current: Int
  var versions: [APIAdjustment]
  init(_ history: EditHistory) {
    current = history.current
    versions = history.versions.map(APIAdjustment.init)
  }
}

struct APIRevert: Encodable, Sendable {
  /// restored-original, restored-version, not-edited or already-at-version.
  var outcome: String
  var version: Int
  init(_ outcome: RevertOutcome) {
    switch outcome {
    case .restoredOriginal: (self.outcome, version) = ("restored-original", 0)
    case .restoredVersion(let n, _): (self.outcome, version) = ("restored-version", n)
    case .notEdited: (self.outcome, version) = ("not-edited", 0)
    case .alreadyAtVersion(let n): (self.outcome, version) = ("already-at-version", n)
    }
  }
}

/// The filters an edit may use, with their parameters, and the presets (built-in, then the
/// library's own).
struct APIFilters: Encodable, Sendable {
  struct Preset: Encodable, Sendable {
    var name: String
    var description: String?
    var filters: [String]
    /// A preset saved in this library (false: built in).
    var user: Bool

    init(name: String, graph: FilterGraph, user: Bool) {
      self.name = name
      self.description = graph.description
      self.filters = graph.nodes.map(\.text)
      self.user = user
    }
  }
  struct Parameter: Encodable, Sendable {
    var name, takes, doc: String
    var min, max: Double?
    var choices: [String]?
    var defaultValue: FilterValue?
    var pixels: Bool
    enum CodingKeys: String, CodingKey {
      case name, takes, doc, min, max, choices, pixels
      case defaultValue = "default"
    }
  }
  struct Filter: Encodable, Sendable {
    var name, summary, space: String
    var parameters: [Parameter]
  }
  var filters: [Filter]
  var presets: [Preset]

  init(userPresets: [UserPreset]) {
    filters = Filters.catalog.map { filter in
      Filter(
        name: filter.name, summary: filter.summary, space: filter.space.rawValue,
        parameters: filter.parameters.map { p in
          var parameter = Parameter(
            name: p.name, takes: p.expectation, doc: p.doc, defaultValue: p.defaultValue,
            pixels: p.isPixels)
          switch p.kind {
          case .number(let range):
            (parameter.min, parameter.max) = (range.lowerBound, range.upperBound)
          case .choice(let values):
            parameter.choices = values.map { FilterValue.number($0).description }
          case .word(let words): parameter.choices = words
          case .ratio, .points: break
          }
          return parameter
        })
    }
    presets =
      Presets.all.map { Preset(name: $0.name, graph: $0.graph, user: false) }
      + userPresets.map { Preset(name: $0.name, graph: $0.graph, user: true) }
  }
}

/// What Auto chose for an asset: filters written as `--filter` takes them.
struct APIAutoFilters: Encodable, Sendable {
  var filters: [String]
}

/// A preset to save: `name`, and `from` (an asset whose current edit it keeps) or the
/// filters or graph themselves.
struct PresetBody: Decodable, Sendable {
  var name: String
  var from: String?
  var filters: [String]?
  var graph: FilterGraph?
  var description: String?
}

struct APIUpload: Encodable, Sendable {
  /// added or duplicate.
  var status: String
  var asset: APIAsset
}

struct APIDuplicates: Encodable, Sendable {
  var groups: [DuplicateGroup]
}

struct JobProgress: Encodable, Sendable {
  var status: Job.Status
  var outcome: JobOutcome?
}

/// What an edit or a preview applies: preset names and `OP key=value` filters, or a graph.
struct EditBody: Decodable, Sendable {
  var filters: [String]?
  var graph: FilterGraph?
  /// append, replace (the default) or from-xmp (the asset's Lightroom edit, taken over; no
  /// filters or graph).
  var mode: String?
  /// A preview's long side, in pixels.
  var size: Int?

  /// How the graph combines with the asset's edit.
  var editMode: EditMode {
    switch mode {
    case "append": .append
    case "from-xmp": .foreign
    default: .replace
    }
  }

  /// The graph asked for; a name may be one of `presets` (the library's own).
  func filterGraph(presets: [String: FilterGraph] = [:]) throws -> FilterGraph {
    if let mode, !["append", "replace", "from-xmp"].contains(mode) {
      throw APIError.badRequest("mode takes append, replace or from-xmp; not \(mode.prefix(32))")
    }
    if mode == "from-xmp" {
      guard filters == nil, graph == nil else {
        throw APIError.badRequest(
          "from-xmp takes the asset's own Lightroom edit: no filters or graph")
      }
      return FilterGraph(nodes: [])
    }
    if let graph { return graph }
    guard let filters, !filters.isEmpty else {
      throw APIError.badRequest("give filters (preset names or OP key=value) or a graph")
    }
    return try FilterGraph.parse(specs: filters, readingFiles: false, presets: presets)
  }
}

struct RevertBody: Decodable, Sendable {
  var version: Int?
}

struct FavouriteBody: Decodable, Sendable {
  var favourite: Bool
}

/// A new shared link: the album, and optionally for how many days it works (1 to 3650), a
/// password a visitor must give, and whether a visitor may download the originals.
struct ShareBody: Decodable, Sendable {
  var album: String
  var days: Int?
  var password: String?
  var download: Bool?

  /// When it stops working, from `days`.
  func expiry(now: Double = Date().timeIntervalSince1970) throws -> Double? {
    guard let days else { return nil }
    guard (1...3650).contains(days) else {
      throw APIError.badRequest("days takes 1 to 3650; not \(days)")
    }
    return now + Double(days) * 86_400
  }
}

/// A shared link as its owner sees it: `url` (`/s/TOKEN`) only in the answer that made it
/// (the library keeps the token's hash alone).
struct APISharedLink: Encodable, Sendable {
  var id: String
  var album: String
  var created: String
  var expires: String?
  var password: Bool
  var download: Bool
  var views: Int
  var url: String?

  init(_ link: SharedLink) {
    (id, album, views) = (link.id, link.album, link.views)
    created = ISO8601DateFormatter().string(from: Date(timeIntervalSince1970: link.created))
    expires = link.expires.map {
      ISO8601DateFormatter().string(from: Date(timeIntervalSince1970: $0))
    }
    (password, download) = (link.hasPassword, link.allowsDownload)
  }
}

struct APISharedLinks: Encodable, Sendable {
  var links: [APISharedLink]
}

/// A change to the user albums: `op` is create, rename, delete, add, remove or poster.
struct AlbumBody: Decodable, Sendable {
  var op: String
  var title: String
  var newTitle: String?
  var ids: [String]?
  /// For `add` and `remove`: the list's parameters less `except`, instead of `ids` (a
  /// gallery's "all 5,000 of this search").
  var query: [String: String]?
  var except: [String]?

  /// The assets it names: its ids, or its query less `except`, as a job's.
  var selection: Selection? {
    ids == nil && query == nil ? nil : Selection(ids: ids, query: query, except: except)
  }

  func change(_ ids: [AssetID]) throws -> Library.AlbumEdit {
    if newTitle?.isEmpty == true { throw APIError.badRequest("newTitle is empty") }
    switch op {
    case "create": return .create(title)
    case "rename":
      guard let newTitle else { throw APIError.badRequest("rename takes newTitle") }
      return .rename(title, to: newTitle)
    case "delete": return .delete(title)
    case "add": return .add(title, ids)
    case "remove": return .remove(title, ids)
    case "poster": return .poster(title, ids.first)
    default:
      throw APIError.badRequest(
        "op takes create, rename, delete, add, remove or poster; not \(op.prefix(32))")
    }
  }
}

/// Some assets: a list of ids, or a query (the list's parameters) less `except`, which is
/// how a gallery sends "all 50,000 of this album" without sending 50,000 ids.
struct Selection: Decodable, Sendable {
  var ids: [String]?
  var query: [String: String]?
  var except: [String]?

  /// Ids from a request body; 400 for the first that is not one.
  static func assetIDs(_ texts: [String]) throws -> [AssetID] {
    try texts.map { text in
      guard let id = AssetID(text) else {
        throw APIError.badRequest("not an asset id: \(text.prefix(64))")
      }
      return id
    }
  }

  init(form: [(String, String)]) {
    var ids: [String] = []
    var query: [String: String] = [:]
    var except: [String] = []
    for (name, value) in form {
      if name == "ids" {
        ids += value.split(separator: ",").map(String.init)
      } else if name == "except" {
        except += value.split(separator: ",").map(String.init)
      } else if AssetQuery.parameterNames.contains(name) {
        query[name] = value
      }
    }
    self.ids = ids.isEmpty && !query.isEmpty ? nil : ids
    self.query = query.isEmpty ? nil : query
    self.except = except.isEmpty ? nil : except
  }
}

/// A batch job: `action` (apply, revert, trash, restore), `filters` for apply, and the
/// selection.
struct JobBody: Decodable, Sendable {
  var action: String
  var filters: [String]?
  var graph: FilterGraph?
  var ids: [String]?
  var query: [String: String]?
  var except: [String]?

  var selection: Selection { Selection(ids: ids, query: query, except: except) }

  func jobAction(presets: [String: FilterGraph] = [:]) throws -> JobAction {
    switch action {
    case "apply":
      return .edit(
        try EditBody(filters: filters, graph: graph).filterGraph(presets: presets), mode: .replace)
    case "revert": return .revert(to: nil)
    case "trash": return .trash
    case "restore": return .restore
    default:
      throw APIError.badRequest(
        "action takes apply, revert, trash or restore; not \(action.prefix(32))")
    }
  }
}

extension Selection {
  init(ids: [String]?, query: [String: String]?, except: [String]?) {
    (self.ids, self.query, self.except) = (ids, query, except)
  }
}
