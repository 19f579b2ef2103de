/// The properties of an XMP packet (an embedded one, or a `.xmp` sidecar) that Darkroom
/// reads: a small XML reader of its own, made for hostile input. It knows the five predefined
/// entities and character references, and nothing else: a packet with a DTD or any other
/// entity is refused whole (no entity is ever expanded, no file or URL fetched). Depth and
/// size are bounded, and namespaces are resolved, so `xmp:Rating` is found under whatever
/// prefix a writer chose.
///
/// ```swift
/// let packet = try XMPPacket(bytes)
/// print(packet.text(XMPPacket.xmp, "Rating") ?? "-", packet.list(XMPPacket.dc, "subject"))
/// ```
package struct XMPPacket: Sendable, Equatable {
  /// Namespaces Darkroom reads from.
  package static let dc = "http://purl.org/dc/elements/1.1/"
  package static let xmp = "http://ns.adobe.com/xap/1.0/"
  package static let exif = "http://ns.adobe.com/exif/1.0/"
  package static let tiff = "http://ns.adobe.com/tiff/1.0/"
  package static let photoshop = "http://ns.adobe.com/photoshop/1.0/"
  package static let lightroom = "http://ns.adobe.com/lightroom/1.0/"
  /// The Metadata Working Group's regions (faces named by Lightroom, digiKam, Picasa).
  package static let mwgRegions = "http://www.metadataworkinggroup.com/schemas/regions/"
  /// Microsoft Photo's people tags (Windows Photo Gallery).
  package static let microsoftRegion = "http://ns.microsoft.com/photo/1.2/t/Region#"
  /// Darkroom's own: the adjustment data it embeds in an edit's result and its sidecars.
  package static let darkroom = "https://darkroom.dev/ns/adjustment-data/1.0/"
  static let rdf = "http://www.w3.org/1999/02/22-rdf-syntax-ns#"
  static let xml = "http://www.w3.org/XML/1998/namespace"
  // Qualified names the reader compares every element and attribute with, made once.
  static let rdfDescription = rdf + "Description"
  static let rdfRDF = rdf + "RDF"
  static let rdfLi = rdf + "li"
  static let rdfBag = rdf + "Bag"
  static let rdfSeq = rdf + "Seq"
  static let rdfAlt = rdf + "Alt"
  static let rdfParseType = rdf + "parseType"
  static let xmlLang = xml + "lang"

  /// The largest packet read: a sidecar larger than this is refused, not parsed.
  package static let maxBytes = 1 << 20
  static let maxDepth = 64
  /// The namespace declarations a packet may make in all (real ones make a few dozen):
  /// each element carries those in scope, so thousands of them nested would cost memory
  /// quadratic in the packet's size.
  static let maxNamespaces = 512

  /// Each property's values by namespace and local name: one for a simple value, the items
  /// of an `rdf:Bag` or `rdf:Seq`, and of an `rdf:Alt` the default language's first.
  private(set) var properties: [String: [String]] = [:]
  /// The properties the packet has, values or not (an empty `dc:subject` says "no keywords").
  private(set) var present: Set<String> = []
  /// Where each property is written, by namespace and local name: whole elements, or
  /// attributes of an `rdf:Description` (for ``XMPSidecar`` to replace them in place).
  private(set) var spans: [String: [Range<Int>]] = [:]
  /// Where new properties go: just inside the first `rdf:Description`. For one written
  /// empty (`<rdf:Description .../>`), the `/>` and the element's name as written.
  private(set) var insertion: (at: Int, selfClosing: (Range<Int>, String)?)?

  package static func == (a: XMPPacket, b: XMPPacket) -> Bool {
    a.properties == b.properties && a.present == b.present
  }

  /// A packet's bytes as UTF-8, without a byte-order mark: one written in UTF-16 with its
  /// mark (Lightroom 4 wrote sidecars so) is transcoded; any other is taken as it is. The
  /// places a packet records (``insertion``, the spans ``XMPSidecar`` replaces) are in these
  /// bytes.
  static func utf8(_ bytes: [UInt8]) -> [UInt8] {
    if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { return Array(bytes.dropFirst(3)) }
    let little = bytes.starts(with: [0xFF, 0xFE])
    guard little || bytes.starts(with: [0xFE, 0xFF]) else { return bytes }
    let units = stride(from: 2, to: bytes.count - 1, by: 2).map { index in
      little
        ? UInt16(bytes[index]) | UInt16(bytes[index + 1]) << 8
        : UInt16(bytes[index]) << 8 | UInt16(bytes[index + 1])
    }
    return Array(String(decoding: units, as: UTF16.self).utf8)
  }

  /// Why a packet is not read.
  package struct Refusal: Error, Sendable, Equatable, CustomStringConvertible {
    package var description: String
  }

  /// Reads a packet.
  ///
  /// - Throws: ``Refusal`` for one too large, with a DTD or an unknown entity, nested too
  ///   deep, or not well formed.
  package init(_ bytes: [UInt8]) throws(Refusal) {
    guard bytes.count <= Self.maxBytes else {
      throw Refusal(description: "larger than \(Self.maxBytes >> 20) MiB")
    }
    var reader = Reader(bytes: Self.utf8(bytes))
    try reader.run()
    (properties, present, spans, insertion) =
      (reader.properties, reader.present, reader.spans, reader.insertion)
    attributed = reader.attributed
  }

  /// The attributes of elements other than descriptions, by the element's qualified name, in
  /// document order: structures written compactly (Google's `Container:Item Item:Length=...`).
  private var attributed: [String: [[String: String]]] = [:]

  /// The attributes (by qualified name) of each `namespace` element `name` that has any, in
  /// document order: `elements(container, "Item")` for a Motion Photo's directory.
  package func elements(_ namespace: String, _ name: String) -> [[String: String]] {
    attributed[namespace + name] ?? []
  }

  /// Whether the packet has `namespace`'s property `name`, even with no value.
  package func has(_ namespace: String, _ name: String) -> Bool {
    present.contains(namespace + name)
  }

  /// The first value of `namespace`'s property `name`, if the packet has it.
  package func text(_ namespace: String, _ name: String) -> String? {
    properties[namespace + name]?.first
  }

  /// The local names of `namespace`'s properties the packet has, values or not.
  package func names(in namespace: String) -> [String] {
    present.filter { $0.hasPrefix(namespace) }.map { String($0.dropFirst(namespace.count)) }
  }

  /// Every value of `namespace`'s property `name` (empty when it has none).
  package func list(_ namespace: String, _ name: String) -> [String] {
    properties[namespace + name] ?? []
  }

  // MARK: The reader

  /// One element being read: its namespaces in scope, its qualified name, and what it holds.
  private struct Element {
    var namespaces: [String: String]
    var name: String  // namespace URI + local name
    var start: Int  // where its start tag's `<` is
    var text: [UInt8] = []
    var items: [String] = []
    var language: String?
    /// `rdf:parseType="Resource"`: its children are properties, as a description's are.
    var isResource = false
  }

  private struct Reader {
    let bytes: [UInt8]
    var at = 0
    var stack: [Element] = []
    var properties: [String: [String]] = [:]
    var present: Set<String> = []
    var spans: [String: [Range<Int>]] = [:]
    var insertion: (at: Int, selfClosing: (Range<Int>, String)?)?
    var attributed: [String: [[String: String]]] = [:]
    var declarations = 0

    init(bytes: [UInt8]) { self.bytes = bytes }

    func fail(_ why: String) -> Refusal { Refusal(description: why) }

    mutating func run() throws(Refusal) {
      while at < bytes.count {
        if bytes[at] == UInt8(ascii: "<") {
          try markup()
        } else {
          let start = at
          while at < bytes.count, bytes[at] != UInt8(ascii: "<") { at += 1 }
          if !stack.isEmpty {
            let text = try Self.decode(bytes[start..<at])
            stack[stack.count - 1].text += text
          }
        }
      }
      guard stack.isEmpty else { throw fail("it ends inside an element") }
    }

    /// Whether the bytes at `offset` are `text` (no allocation: this runs for every tag).
    func matches(_ text: StaticString, at offset: Int) -> Bool {
      let count = text.utf8CodeUnitCount
      guard offset + count <= bytes.count else { return false }
      return text.withUTF8Buffer { pattern in
        for index in 0..<count where bytes[offset + index] != pattern[index] { return false }
        return true
      }
    }

    func starts(_ text: StaticString) -> Bool { matches(text, at: at) }

    mutating func skip(past end: StaticString) throws(Refusal) {
      let count = end.utf8CodeUnitCount
      while at + count <= bytes.count {
        if matches(end, at: at) {
          at += count
          return
        }
        at += 1
      }
      throw fail("it ends inside markup")
    }

    mutating func markup() throws(Refusal) {
      if starts("<?") { return try skip(past: "?>") }
      if starts("<!--") { return try skip(past: "-->") }
      if starts("<![CDATA[") {
        at += 9
        let start = at
        try skip(past: "]]>")
        if !stack.isEmpty { stack[stack.count - 1].text += bytes[start..<at - 3] }
        return
      }
      if starts("<!") { throw fail("it has a DTD or entity declarations") }
      if starts("</") {
        at += 2
        let name = readName()
        skipSpace()
        guard at < bytes.count, bytes[at] == UInt8(ascii: ">") else { throw fail("a bad end tag") }
        at += 1
        guard let element = stack.popLast(), element.name == qualified(name, element.namespaces)
        else { throw fail("an end tag that closes no element") }
        close(element, end: at)
        return
      }
      at += 1
      try startTag()
    }

    mutating func startTag() throws(Refusal) {
      let tagStart = at - 1
      let name = readName()
      guard !name.isEmpty else { throw fail("a tag without a name") }
      var attributes: [(String, String, Range<Int>)] = []
      var namespaces = stack.last?.namespaces ?? ["xml": XMPPacket.xml]
      var empty = false
      while true {
        skipSpace()
        guard at < bytes.count else { throw fail("it ends inside a tag") }
        if bytes[at] == UInt8(ascii: ">") {
          at += 1
          break
        }
        if starts("/>") {
          at += 2
          empty = true
          break
        }
        let attributeStart = at
        let attribute = readName()
        skipSpace()
        guard !attribute.isEmpty, at < bytes.count, bytes[at] == UInt8(ascii: "=") else {
          throw fail("a bad attribute")
        }
        at += 1
        skipSpace()
        guard at < bytes.count, bytes[at] == UInt8(ascii: "\"") || bytes[at] == UInt8(ascii: "'")
        else { throw fail("an attribute without quotes") }
        let quote = bytes[at]
        at += 1
        let start = at
        while at < bytes.count, bytes[at] != quote {
          guard bytes[at] != UInt8(ascii: "<") else { throw fail("a '<' inside an attribute") }
          at += 1
        }
        guard at < bytes.count else { throw fail("it ends inside an attribute") }
        let value = String(decoding: try Self.decode(bytes[start..<at]), as: UTF8.self)
        at += 1
        if attribute == "xmlns" || attribute.hasPrefix("xmlns:") {
          declarations += 1
          guard declarations <= XMPPacket.maxNamespaces else {
            throw fail("more than \(XMPPacket.maxNamespaces) namespace declarations")
          }
          namespaces[attribute == "xmlns" ? "" : String(attribute.dropFirst(6))] = value
        } else {
          attributes.append((attribute, value, attributeStart..<at))
        }
      }
      guard stack.count < XMPPacket.maxDepth else { throw fail("nested too deep") }
      var element = Element(
        namespaces: namespaces, name: qualified(name, namespaces), start: tagStart)
      let description = element.name == XMPPacket.rdfDescription
      let topLevel = description && stack.last?.name == XMPPacket.rdfRDF
      var own: [String: String] = [:]
      for (attribute, value, range) in attributes {
        let key = qualified(attribute, namespaces)
        let lang = key == XMPPacket.xmlLang
        let inRDF = key.hasPrefix(XMPPacket.rdf)
        if !description, !inRDF, !lang, attributed.count < 4096 {
          own[key] = value
        }
        if lang {
          element.language = value
        } else if key == XMPPacket.rdfParseType {
          element.isResource = value == "Resource"
        } else if description, !inRDF {
          // A property written as an attribute of its description.
          if !value.isEmpty { properties[key, default: []].append(value) }
          present.insert(key)
          if topLevel { spans[key, default: []].append(range) }
        }
      }
      if !own.isEmpty { attributed[element.name, default: []].append(own) }
      if description, insertion == nil {
        insertion = (at, empty ? (at - 2..<at, name) : nil)
      }
      if empty { close(element, end: at) } else { stack.append(element) }
    }

    /// An element ends: a list item goes to its list, a list to the property that holds it,
    /// a property's text to the property.
    mutating func close(_ element: Element, end: Int) {
      let trimmed = element.text.drop(while: Self.isSpace).reversed().drop(while: Self.isSpace)
      let text = String(decoding: trimmed.reversed(), as: UTF8.self)
      guard var parent = stack.popLast() else { return }
      defer { stack.append(parent) }
      switch element.name {
      case XMPPacket.rdfLi:
        // A structure (its fields were taken as properties) is no text item.
        if element.isResource { return }
        // An Alt's default language goes first, wherever it is written.
        if element.language == "x-default" {
          parent.items.insert(text, at: 0)
        } else {
          parent.items.append(text)
        }
      case XMPPacket.rdfBag, XMPPacket.rdfSeq, XMPPacket.rdfAlt:
        parent.items += element.items
      default:
        guard parent.name == XMPPacket.rdfDescription || parent.isResource else { return }
        let values = element.items.isEmpty ? (text.isEmpty ? [] : [text]) : element.items
        if !values.isEmpty { properties[element.name, default: []] += values }
        present.insert(element.name)
        // Where a top-level property stands, for XMPSidecar to replace (never a field of a
        // structure that happens to share its name).
        if stack.last?.name == XMPPacket.rdfRDF {
          spans[element.name, default: []].append(element.start..<end)
        }
      }
    }

    func qualified(_ name: String, _ namespaces: [String: String]) -> String {
      guard let colon = name.firstIndex(of: ":") else { return (namespaces[""] ?? "") + name }
      let prefix = String(name[..<colon])
      return (namespaces[prefix] ?? prefix + ":") + name[name.index(after: colon)...]
    }

    mutating func readName() -> String {
      let start = at
      while at < bytes.count {
        switch bytes[at] {
        case 0x80...0xFF, UInt8(ascii: "a")...UInt8(ascii: "z"),
          UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
          UInt8(ascii: ":"), UInt8(ascii: "_"), UInt8(ascii: "-"), UInt8(ascii: "."):
          at += 1
        default:
          return String(decoding: bytes[start..<at], as: UTF8.self)
        }
      }
      return String(decoding: bytes[start..<at], as: UTF8.self)
    }

    /// XML's white space: space, tab, line feed, carriage return.
    static func isSpace(_ byte: UInt8) -> Bool {
      byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D
    }

    mutating func skipSpace() {
      while at < bytes.count, Self.isSpace(bytes[at]) { at += 1 }
    }

    /// Text with its references replaced: the five predefined entities and character
    /// references; any other entity refuses the packet.
    static func decode(_ text: ArraySlice<UInt8>) throws(Refusal) -> [UInt8] {
      guard text.contains(UInt8(ascii: "&")) else { return Array(text) }
      var out: [UInt8] = []
      var index = text.startIndex
      while index < text.endIndex {
        guard text[index] == UInt8(ascii: "&") else {
          out.append(text[index])
          index += 1
          continue
        }
        guard let end = text[index...].firstIndex(of: UInt8(ascii: ";")), end - index <= 12 else {
          throw Refusal(description: "a '&' that starts no reference")
        }
        let name = String(decoding: text[index + 1..<end], as: UTF8.self)
        switch name {
        case "lt": out.append(UInt8(ascii: "<"))
        case "gt": out.append(UInt8(ascii: ">"))
        case "amp": out.append(UInt8(ascii: "&"))
        case "quot": out.append(UInt8(ascii: "\""))
        case "apos": out.append(UInt8(ascii: "'"))
        default:
          let number: UInt32? =
            name.hasPrefix("#x")
            ? UInt32(name.dropFirst(2), radix: 16)
            : name.hasPrefix("#") ? UInt32(name.dropFirst(1)) : nil
          guard let number, let scalar = Unicode.Scalar(number) else {
            throw Refusal(description: "an entity it does not define (&\(name.prefix(16));)")
          }
          out += Array(String(Character(scalar)).utf8)
        }
        index = end + 1
      }
      return out
    }
  }
}
