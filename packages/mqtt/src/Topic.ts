/**
 * MQTT topic names and filters (MQTT 3.1.1 §4.7 / MQTT 5 §4.7): validation, matching, and the
 * optional topic prefix that isolates deployments (or tests) sharing a broker.
 */

const sharePattern = /^\$share\/([^/#+]+)\/(.+)$/

/** `undefined` when `topic` can be published to, otherwise what is wrong with it. */
export const validateName = (topic: string): string | undefined => {
  if (topic.length === 0) return "a topic must not be empty"
  if (topic.includes("+") || topic.includes("#")) return `wildcards are not allowed in the topic "${topic}"`
  if (topic.includes("\u0000")) return "a topic must not contain NUL characters"
  if (Buffer.byteLength(topic, "utf8") > 65535) return "a topic must not exceed 65535 bytes"
  return undefined
}

/** `undefined` when `filter` can be subscribed to, otherwise what is wrong with it. */
export const validateFilter = (filter: string): string | undefined => {
  const inner = sharePattern.exec(filter)?.[2] ?? filter
  if (filter.startsWith("$share/") && inner === filter) return `"${filter}" is not a valid shared subscription ($share/<group>/<filter>)`
  if (inner.length === 0) return "a topic filter must not be empty"
  if (inner.includes("\u0000")) return "a topic filter must not contain NUL characters"
  const levels = inner.split("/")
  for (let i = 0; i < levels.length; i++) {
    const level = levels[i]!
    if (level.includes("#") && (level !== "#" || i !== levels.length - 1)) {
      return `"#" must be a whole last level in "${filter}"`
    }
    if (level.includes("+") && level !== "+") return `"+" must be a whole level in "${filter}"`
  }
  return undefined
}

/** The filter the broker matches topics against (`$share/<group>/` removed). */
export const matchingPart = (filter: string): string => sharePattern.exec(filter)?.[2] ?? filter

/**
 * Whether `topic` matches `filter`. Wildcards do not match topics starting with `$` at the first
 * level (MQTT-4.7.2-1), so `#` does not receive `$SYS/...`.
 */
export const matches = (filter: string, topic: string): boolean => {
  const f = matchingPart(filter).split("/")
  const t = topic.split("/")
  if (topic.startsWith("$") && (f[0] === "+" || f[0] === "#")) return false
  for (let i = 0; i < f.length; i++) {
    const level = f[i]!
    if (level === "#") return true
    if (i >= t.length) return false
    if (level !== "+" && level !== t[i]) return false
  }
  return f.length === t.length
}

/** Puts `prefix` in front of a topic or filter, keeping `$share/<group>/` in front. */
export const withPrefix = (prefix: string, topicOrFilter: string): string => {
  if (prefix === "") return topicOrFilter
  const share = sharePattern.exec(topicOrFilter)
  return share === null ? `${prefix}${topicOrFilter}` : `$share/${share[1]}/${prefix}${share[2]}`
}

/** The topic as the application sees it (`prefix` removed), or `undefined` when it lacks the prefix. */
export const withoutPrefix = (prefix: string, topic: string): string | undefined =>
  prefix === "" ? topic : topic.startsWith(prefix) ? topic.slice(prefix.length) : undefined
