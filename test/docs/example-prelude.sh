# Sourced before each shell example of the documentation (test/docs/examples.test.ts runs them).
# __curl keeps each answer (status and body) for the comparison with what the page shows, and the
# id an ingest answered, for <document_id>; __settle waits until nothing is queued or processing.
set -eo pipefail
__curl() {
  local step=$1; shift
  local out status body id
  out=$(command curl "$@" -w '\n%{http_code}') || return $?
  status=${out##*$'\n'}
  body=${out%$'\n'*}
  printf '%s' "$status" > "$__STEPS/$step.status"
  printf '%s' "$body" > "$__STEPS/$step.body"
  id=$(printf '%s' "$body" | grep -o '"document_ids":\["[^"]*"' | head -n 1 | sed 's/.*\["//; s/"$//') || true
  if [ -n "$id" ]; then printf '%s' "$id" > "$__STATE/last-document-id"; fi
  printf '%s\n' "$body"
}
__settle() {
  local waiting
  for _ in $(seq 1 240); do
    waiting=$(command curl -s "$DOCINDEX_URL/v1/documents?status=queued&limit=1" -H "Authorization: Bearer $KEY")
    waiting+=$(command curl -s "$DOCINDEX_URL/v1/documents?status=processing&limit=1" -H "Authorization: Bearer $KEY")
    case "$waiting" in *'"documents":[]'*'"documents":[]'*) return 0 ;; esac
    sleep 0.25
  done
}
