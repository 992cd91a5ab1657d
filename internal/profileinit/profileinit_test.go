package profileinit_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/internal/profileinit"
	"github.com/idemproof/idemproof/profile"
)

// generate writes the profile for one operation of a document and loads it back.
func generate(t *testing.T, path, operation string) (string, *profile.Profile) {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	text, err := profileinit.FromOpenAPI(data, profileinit.Options{Operation: operation, Source: filepath.Base(path)})
	require.NoError(t, err)
	p, err := profile.Parse(path+" → profile", text)
	require.NoError(t, err, "the written profile loads:\n%s", text)
	require.NoError(t, p.Validate())
	return string(text), p
}

// generateFrom is generate for a document given inline.
func generateFrom(t *testing.T, name, doc string, opts profileinit.Options) (*profile.Profile, []byte) {
	t.Helper()
	text, err := profileinit.FromOpenAPI([]byte(doc), opts)
	require.NoError(t, err)
	p, err := profile.Parse(name, text)
	require.NoError(t, err, "%s", text)
	return p, text
}

func TestReferenceServersOwnDocument(t *testing.T) {
	text, p := generate(t, "../../docs/openapi.yaml", "createRefund")
	require.Contains(t, text, "(OpenAPI 3.1.0)", "a 3.1 document")
	require.Equal(t, "idemproof-reference-refunds-createrefund", p.Name)
	require.Equal(t, "http://127.0.0.1:8080", p.BaseURL, "the first server, API_URL unset")
	require.Equal(t, "Idempotency-Key", p.KeyHeader)
	require.Equal(t, "POST", p.Operation.Method)
	require.Equal(t, "/v1/refunds", p.Operation.Path)
	require.Equal(t, `{"amount":4900,"order_id":"{{.Entity}}","reason":"requested_by_customer"}`, p.Operation.Body, "the example, order_id carrying the entity")
	require.Equal(t, `{"amount":4901,"order_id":"{{.Entity}}","reason":"requested_by_customer"}`, p.Operation.AlteredBody)
	require.Equal(t, "/v1/refunds?order_id={{.Entity}}", p.SideEffects.Path, "the GET on the same path filtered by the entity")
	require.Equal(t, "count", p.SideEffects.Count)
	require.NotNil(t, p.Other)
	require.Equal(t, "/v1/invoices", p.Other.Path)
	require.Equal(t, "/v1/invoices?order_id={{.Entity}}", p.Other.SideEffects.Path)
	require.Equal(t, 409, p.Expect.InFlight)
	require.Equal(t, 422, p.Expect.Mismatch)
	require.Equal(t, "400", p.Expect.MissingKey, "the key header is required")
	require.Equal(t, "Idempotent-Replayed", p.Expect.ReplayHeader)
	require.Contains(t, text, "; guess: order_id carries the fresh entity")
	require.NotNil(t, p.Validation, "a body below the schema's minimum, the document declaring 400")
	require.Equal(t, `{"amount":-4,"order_id":"{{.Entity}}","reason":"requested_by_customer"}`, p.Validation.Body)
	require.Equal(t, 400, p.Validation.Status)
}

func TestSwaggerPetstore(t *testing.T) {
	text, p := generate(t, "testdata/petstore.json", "addPet")
	require.Equal(t, "https://petstore.swagger.io/v2", p.BaseURL)
	require.Equal(t, "/pet", p.Operation.Path)
	require.Equal(t, `{"name":"{{.Entity}}","photoUrls":[]}`, p.Operation.Body, "the required properties at their simplest")
	require.NotEqual(t, p.Operation.Body, p.Operation.AlteredBody)
	require.Equal(t, "Idempotency-Key", p.KeyHeader)
	require.Contains(t, text, "key_header: Idempotency-Key   # guess: the document names no idempotency header")
	require.Contains(t, text, "mismatch: 422   # guess: the document declares no 422")

	_, order := generate(t, "testdata/petstore.json", "placeOrder")
	require.Contains(t, order.Operation.Body, `"shipDate":"2026-01-01T00:00:00Z"`, "a date-time stays a date-time, not the entity")
	require.Contains(t, order.SideEffects.Path, "{{.Entity}}")
}

func TestOpenAPIInitiativeLinkExample(t *testing.T) {
	text, p := generate(t, "testdata/link-example.yaml", "mergePullRequest")
	require.Equal(t, "/2.0/repositories/{{.Entity}}/{{.Entity}}/pullrequests/{{.Entity}}/merge", p.Operation.Path)
	require.Empty(t, p.Operation.Body)
	require.Contains(t, text, "# guess: path parameters carry the fresh entity")
	require.Contains(t, text, "the scenarios that send another payload are N/A")
}

func TestChoosingTheOperation(t *testing.T) {
	spec, err := os.ReadFile("../../docs/openapi.yaml")
	require.NoError(t, err)
	_, err = profileinit.FromOpenAPI(spec, profileinit.Options{})
	require.EqualError(t, err, "several operations declare an idempotency key; pick one with --operation: createInvoice (POST /v1/invoices), createRefund (POST /v1/refunds)")
	_, err = profileinit.FromOpenAPI(spec, profileinit.Options{Operation: "nope"})
	require.ErrorContains(t, err, `no operation has operationId "nope"; the document has: health (GET /healthz), listInvoices (GET /v1/invoices), createInvoice (POST /v1/invoices)`)

	pet, err := os.ReadFile("testdata/petstore.json")
	require.NoError(t, err)
	_, err = profileinit.FromOpenAPI(pet, profileinit.Options{})
	require.ErrorContains(t, err, "no operation declares an idempotency key header; pick the keyed one with --operation: updatePet (PATCH /pet), addPet (POST /pet)")
	require.NotContains(t, err.Error(), "getPetById", "only writing operations are offered")

	_, err = profileinit.FromOpenAPI([]byte("openapi: 3.0.0\npaths: [1]\n"), profileinit.Options{})
	require.ErrorContains(t, err, "load OpenAPI document")
}

func TestOneKeyedOperationIsChosenAlone(t *testing.T) {
	doc := `openapi: 3.0.3
info: {title: Payments, version: '1'}
paths:
  /payments:
    post:
      operationId: createPayment
      parameters:
        - {name: X-Idempotency-Key, in: header, schema: {type: string}}
      requestBody:
        content:
          application/json:
            schema:
              type: object
              required: [account_id, amount]
              properties:
                account_id: {type: string}
                amount: {type: number, minimum: 0}
      responses: {'201': {description: created}}
    get:
      operationId: listPayments
      parameters: [{name: account_id, in: query, schema: {type: string}}]
      responses:
        '200':
          description: payments
          content: {application/json: {schema: {type: array, items: {type: object}}}}
`
	p, _ := generateFrom(t, "payments", doc, profileinit.Options{})
	require.Equal(t, "X-Idempotency-Key", p.KeyHeader)
	require.Equal(t, "optional", p.Expect.MissingKey, "the header is not required")
	require.Equal(t, `{"account_id":"{{.Entity}}","amount":1}`, p.Operation.Body)
	require.Equal(t, `{"account_id":"{{.Entity}}","amount":2}`, p.Operation.AlteredBody)
	require.Equal(t, "/payments?account_id={{.Entity}}", p.SideEffects.Path)
	require.Equal(t, "#", p.SideEffects.Count, "the answer is an array")
}

func TestKeyInTheBody(t *testing.T) {
	doc := `openapi: 3.1.0
info: {title: Tools, version: '1'}
paths:
  /refund:
    post:
      operationId: refund
      requestBody:
        content:
          application/json:
            example: {order_id: o1, amount: 10, idempotency_key: k1}
      responses: {'200': {description: ok}}
`
	p, _ := generateFrom(t, "tools", doc, profileinit.Options{Operation: "refund"})
	require.Equal(t, "idempotency_key", p.KeyField)
	require.Empty(t, p.KeyHeader)
	require.Equal(t, `{"amount":10,"order_id":"{{.Entity}}"}`, p.Operation.Body, "the runner writes the key field")
}

// A key's maxLength in the document becomes expect.max_key_length (AWS-style tokens of 64),
// for a header parameter and for a body property alike.
func TestTheKeysMaxLengthIsDeclared(t *testing.T) {
	doc := `openapi: 3.0.3
info: {title: Payments, version: '1'}
paths:
  /payments:
    post:
      operationId: createPayment
      parameters:
        - {name: Idempotency-Key, in: header, required: true, schema: {type: string, maxLength: 64}}
      requestBody:
        content:
          application/json:
            schema:
              type: object
              properties:
                account_id: {type: string}
                amount: {type: number}
      responses: {'201': {description: created}}
`
	p, text := generateFrom(t, "payments", doc, profileinit.Options{})
	require.Equal(t, 64, p.Expect.MaxKeyLength)

	short := strings.Replace(doc, "maxLength: 64", "maxLength: 36", 1)
	p, text = generateFrom(t, "payments", short, profileinit.Options{})
	require.Zero(t, p.Expect.MaxKeyLength)
	require.Contains(t, string(text), "a maxLength of 36")

	body := `openapi: 3.1.0
info: {title: Tokens, version: '1'}
paths:
  /refunds:
    post:
      operationId: createRefund
      requestBody:
        content:
          application/json:
            schema:
              type: object
              properties:
                order_id: {type: string}
                amount: {type: integer}
                idempotency_token: {type: string, maxLength: 128}
      responses: {'200': {description: ok}}
`
	p, text = generateFrom(t, "tokens", body, profileinit.Options{Operation: "createRefund"})
	require.Equal(t, "idempotency_token", p.KeyField)
	require.Equal(t, 128, p.Expect.MaxKeyLength)
}

// A key the document gives `format: uuid` (a target that may refuse any other key) makes
// expect.key_format uuid, for a header parameter and for a body property alike; a key of
// no format leaves the free-form default.
func TestAUUIDKeyDeclaresKeyFormat(t *testing.T) {
	doc := `openapi: 3.0.3
info: {title: Payments, version: '1'}
paths:
  /payments:
    post:
      operationId: createPayment
      parameters:
        - {name: Idempotency-Key, in: header, required: true, schema: {type: string, format: uuid, maxLength: 36}}
      requestBody:
        content:
          application/json:
            schema:
              type: object
              properties:
                account_id: {type: string}
                amount: {type: number}
      responses: {'201': {description: created}}
`
	p, text := generateFrom(t, "payments", doc, profileinit.Options{})
	require.Equal(t, profile.KeyFormatUUID, p.Expect.KeyFormat)
	require.Contains(t, string(text), "key_format: uuid   # the key's format in the document is uuid")
	require.NotContains(t, string(text), "maxLength of 36", "a UUID's 36 characters are no key length limit to note")

	free := strings.Replace(doc, "format: uuid, ", "", 1)
	p, text = generateFrom(t, "payments", free, profileinit.Options{})
	require.Empty(t, p.Expect.KeyFormat)
	require.NotContains(t, string(text), "key_format")

	body := `openapi: 3.1.0
info: {title: Tokens, version: '1'}
paths:
  /refunds:
    post:
      operationId: createRefund
      requestBody:
        content:
          application/json:
            schema:
              type: object
              properties:
                order_id: {type: string}
                amount: {type: integer}
                idempotency_key: {type: string, format: uuid}
      responses: {'200': {description: ok}}
`
	p, text = generateFrom(t, "tokens", body, profileinit.Options{Operation: "createRefund"})
	require.Equal(t, "idempotency_key", p.KeyField)
	require.Equal(t, profile.KeyFormatUUID, p.Expect.KeyFormat)
}

func TestTemplateLoads(t *testing.T) {
	p, err := profile.Parse("template", []byte(profileinit.Template))
	require.NoError(t, err)
	require.Equal(t, "my-api", p.Name)
	require.True(t, strings.HasPrefix(profileinit.Template, "# idemproof target profile"))
}
