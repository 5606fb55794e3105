// Package keyring is the CloudFormation custom resource Custom::KeyRing,
// which keeps a key ring (package keyfile's JSON object of key ids to
// secrets, {"k1":"..."}, the format of the gateway's request-state keys and
// of the connectors' key ring) in an SSM Parameter Store SecureString
// parameter of the standard tier: free to keep, encrypted with the AWS
// managed key aws/ssm (no monthly fee) unless KeyId names another.
// CloudFormation cannot create a SecureString parameter itself.
//
// On Create it writes a ring of one new key, k1, refusing to overwrite a
// parameter that exists. On Update it keeps the ring, and rotates only when
// the Rotation property changed: it adds a newer key beside the others,
// which still open what they sealed (the rotation design of package
// keyfile: the newest key seals, every key opens; retire an old key by
// hand once nothing it sealed is needed). On Delete it deletes the
// parameter. Its attribute Reference is the parameter's ARN and version
// (ARN#VERSION, what package config/secrets reads), so that a rotation
// changes the functions' environment and fresh instances read the new ring.
//
//	lambda.Start(cfn.LambdaWrap(keyring.Resource{AWS: cfg}.Handle))
package keyring

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/aws/aws-lambda-go/cfn"
	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/switchboard-dev/switchboard/shared/awsjson"
	"github.com/switchboard-dev/switchboard/shared/keyfile"
)

// ResourceType is the custom resource's type in the template.
const ResourceType = "Custom::KeyRing"

// The resource's properties, and its attribute.
const (
	// PropName is the parameter's name: a path of at least two levels,
	// such as /switchboard/<stack>/request-state-keys (a one-level name's
	// ARN would be ambiguous).
	PropName = "Name"
	// PropKeyID is the KMS key to encrypt with; empty for aws/ssm.
	PropKeyID = "KeyId"
	// PropRotation is any text; a changed value adds a newer key.
	PropRotation = "Rotation"
	// AttrReference is ARN#VERSION of the parameter's current version.
	AttrReference = "Reference"
)

// MaxRingBytes is the largest ring a standard parameter holds.
const MaxRingBytes = 4096

// namePattern is what SSM accepts as a parameter's name, as a path of two
// levels or more.
var namePattern = regexp.MustCompile(`^(/[A-Za-z0-9_.-]+){2,15}$`)

// Resource handles the custom resource's requests with AWS's SSM.
type Resource struct {
	AWS aws.Config
}

// props are a request's properties.
type props struct{ Name, KeyID, Rotation string }

func propsOf(m map[string]any) (props, error) {
	p := props{Name: str(m[PropName]), KeyID: str(m[PropKeyID]), Rotation: str(m[PropRotation])}
	if !namePattern.MatchString(p.Name) || len(p.Name) > 1011 || strings.HasPrefix(strings.ToLower(p.Name), "/aws") || strings.HasPrefix(strings.ToLower(p.Name), "/ssm") {
		return p, fmt.Errorf("keyring: property %s: %q is not a parameter path of two levels or more (/a/b), of letters, digits and _.-, not under /aws or /ssm", PropName, p.Name)
	}
	return p, nil
}

func str(v any) string {
	if v == nil {
		return ""
	}
	return fmt.Sprint(v)
}

// Handle answers one request (cfn.LambdaWrap sends the answer to
// CloudFormation's pre-signed URL): the physical ID is the parameter's
// name, the data its [AttrReference].
func (r Resource) Handle(ctx context.Context, e cfn.Event) (physicalID string, data map[string]any, err error) {
	p, err := propsOf(e.ResourceProperties)
	if err != nil {
		if e.RequestType == cfn.RequestDelete {
			return e.PhysicalResourceID, nil, nil // nothing of ours was made
		}
		return "", nil, err
	}
	arn, err := parameterARN(e.StackID, p.Name)
	if err != nil {
		return "", nil, err
	}
	var version int
	switch e.RequestType {
	case cfn.RequestCreate:
		version, err = r.put(ctx, p, newRing(), false)
	case cfn.RequestUpdate:
		version, err = r.update(ctx, e, p)
	case cfn.RequestDelete:
		// A failed Create answers with the request id as the physical
		// id: only a parameter this resource made is deleted.
		if e.PhysicalResourceID == p.Name {
			err = r.delete(ctx, p.Name)
		}
		return e.PhysicalResourceID, nil, err
	default:
		return "", nil, fmt.Errorf("keyring: request type %q is not Create, Update or Delete", e.RequestType)
	}
	if err != nil {
		return "", nil, err
	}
	return p.Name, map[string]any{AttrReference: arn + "#" + strconv.Itoa(version)}, nil
}

// update keeps the ring of the old properties' parameter, adding a newer
// key when Rotation changed, and writes it to the new properties' when the
// name, the key or the ring changed.
func (r Resource) update(ctx context.Context, e cfn.Event, p props) (int, error) {
	old, err := propsOf(e.OldResourceProperties)
	if err != nil {
		return 0, err
	}
	ring, version, err := r.get(ctx, old.Name)
	switch {
	case awsjson.IsCode(err, "ParameterNotFound"):
		// Deleted outside the stack: what it sealed cannot be opened
		// any more, and a new ring lets the stack go on.
		return r.put(ctx, p, newRing(), true)
	case err != nil:
		return 0, err
	}
	rotate := p.Rotation != old.Rotation
	if rotate {
		id := "k" + strconv.Itoa(number(ring.Newest())+1)
		ring[id] = keyfile.NewSecret()
	}
	if rotate || p.Name != old.Name || p.KeyID != old.KeyID {
		return r.put(ctx, p, ring, p.Name == old.Name)
	}
	return version, nil
}

func number(id string) int {
	n, _ := strconv.Atoi(strings.TrimPrefix(id, "k"))
	return n
}

// newRing returns a ring of one new key, k1.
func newRing() keyfile.Keys { return keyfile.Keys{"k1": keyfile.NewSecret()} }

// get returns the ring in the parameter name and its version.
func (r Resource) get(ctx context.Context, name string) (keyfile.Keys, int, error) {
	var out struct {
		Parameter struct {
			Value   string
			Version int
		}
	}
	err := awsjson.Retry(ctx, func() (bool, error) {
		return awsjson.Call(ctx, &r.AWS, awsjson.SSM, "GetParameter", map[string]any{"Name": name, "WithDecryption": true}, &out, 64<<10)
	})
	if err != nil {
		return nil, 0, fmt.Errorf("keyring: reading parameter %s: %w", name, err)
	}
	ring, err := keyfile.Parse(out.Parameter.Value)
	if err != nil {
		return nil, 0, fmt.Errorf("keyring: parameter %s: %w", name, err)
	}
	return ring, out.Parameter.Version, nil
}

// put writes ring to p's parameter, a standard SecureString, and returns
// its version; overwrite allows replacing one that exists.
func (r Resource) put(ctx context.Context, p props, ring keyfile.Keys, overwrite bool) (int, error) {
	value, err := json.Marshal(ring)
	if err != nil {
		return 0, err
	}
	if len(value) > MaxRingBytes {
		return 0, fmt.Errorf("keyring: the ring of %s would be %d bytes, over a standard parameter's %d: retire old keys from it first", p.Name, len(value), MaxRingBytes)
	}
	in := map[string]any{"Name": p.Name, "Value": string(value), "Type": "SecureString", "Tier": "Standard", "Overwrite": overwrite,
		"Description": "Switchboard key ring (key id to secret), kept by the stack's Custom::KeyRing"}
	if p.KeyID != "" {
		in["KeyId"] = p.KeyID
	}
	var out struct{ Version int }
	err = awsjson.Retry(ctx, func() (bool, error) {
		return awsjson.Call(ctx, &r.AWS, awsjson.SSM, "PutParameter", in, &out, 64<<10)
	})
	if awsjson.IsCode(err, "ParameterAlreadyExists") {
		return 0, fmt.Errorf("keyring: parameter %s exists already, and is not this resource's: delete it, or deploy under another stack name", p.Name)
	}
	if err != nil {
		return 0, fmt.Errorf("keyring: writing parameter %s: %w", p.Name, err)
	}
	return out.Version, nil
}

// delete deletes the parameter name; one that is gone already is no error.
func (r Resource) delete(ctx context.Context, name string) error {
	err := awsjson.Retry(ctx, func() (bool, error) {
		return awsjson.Call(ctx, &r.AWS, awsjson.SSM, "DeleteParameter", map[string]any{"Name": name}, nil, 64<<10)
	})
	if err != nil && !awsjson.IsCode(err, "ParameterNotFound") {
		return fmt.Errorf("keyring: deleting parameter %s: %w", name, err)
	}
	return nil
}

// parameterARN returns the ARN of the parameter name in the partition,
// region and account of the stack whose ARN is stackID.
func parameterARN(stackID, name string) (string, error) {
	parts := strings.SplitN(stackID, ":", 6)
	if len(parts) != 6 || parts[0] != "arn" || parts[2] != "cloudformation" {
		return "", errors.New("keyring: the request's StackId is not a stack's ARN")
	}
	return "arn:" + parts[1] + ":ssm:" + parts[3] + ":" + parts[4] + ":parameter" + name, nil
}
