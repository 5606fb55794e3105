package statemachine

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
)

// rule is one Choice rule: a comparison of the value at variable, or And,
// Or, Not of nested rules. next is set on top-level rules only.
type rule struct {
	next     string
	variable path
	op       string // BooleanEquals, StringEquals, NumericEquals, IsPresent, And, Or, Not
	operand  any
	nested   []*rule
}

// The comparison operators this package implements.
var comparisons = map[string]bool{"BooleanEquals": true, "StringEquals": true, "NumericEquals": true, "IsPresent": true}

func parseRule(raw json.RawMessage, top bool) (*rule, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		return nil, err
	}
	r := &rule{}
	if n, ok := fields["Next"]; ok {
		if !top {
			return nil, fmt.Errorf("a nested rule cannot have Next")
		}
		if err := json.Unmarshal(n, &r.next); err != nil || r.next == "" {
			return nil, at("Next", errors.New("must be a state name"))
		}
		delete(fields, "Next")
	} else if top {
		return nil, fmt.Errorf("a top-level rule needs Next")
	}
	var variable json.RawMessage
	if v, ok := fields["Variable"]; ok {
		variable = v
		delete(fields, "Variable")
	}
	if len(fields) != 1 {
		return nil, fmt.Errorf("a rule needs exactly one operator, has %d fields besides Variable and Next", len(fields))
	}
	for op, val := range fields {
		r.op = op
		switch {
		case op == "And" || op == "Or":
			var subs []json.RawMessage
			if err := json.Unmarshal(val, &subs); err != nil || len(subs) == 0 {
				return nil, fmt.Errorf("%s needs a non-empty array of rules", op)
			}
			for i, s := range subs {
				n, err := parseRule(s, false)
				if err != nil {
					return nil, at(fmt.Sprintf("%s[%d]", op, i), err)
				}
				r.nested = append(r.nested, n)
			}
		case op == "Not":
			n, err := parseRule(val, false)
			if err != nil {
				return nil, at("Not", err)
			}
			r.nested = []*rule{n}
		case comparisons[op]:
			if variable == nil {
				return nil, fmt.Errorf("%s needs a Variable", op)
			}
			var s string
			if err := json.Unmarshal(variable, &s); err != nil {
				return nil, at("Variable", errors.New("must be a path"))
			}
			p, err := parsePath(s)
			if err != nil {
				return nil, at("Variable", err)
			}
			r.variable = p
			v, err := decode(val)
			if err != nil {
				return nil, at(op, err)
			}
			ok := false
			switch op {
			case "BooleanEquals", "IsPresent":
				_, ok = v.(bool)
			case "StringEquals":
				_, ok = v.(string)
			case "NumericEquals":
				_, ok = v.(json.Number)
			}
			if !ok {
				return nil, fmt.Errorf("%s has an operand of the wrong type", op)
			}
			r.operand = v
		default:
			return nil, fmt.Errorf("operator %s is not supported (only And, Or, Not, BooleanEquals, StringEquals, NumericEquals, IsPresent)", op)
		}
		if (op == "And" || op == "Or" || op == "Not") && variable != nil {
			return nil, fmt.Errorf("%s cannot have a Variable", op)
		}
	}
	return r, nil
}

// eval tests r against input. And and Or stop at the first rule that decides
// them, as on AWS, so that an IsPresent test guards the comparisons after
// it. A comparison of a missing variable is a States.Runtime error; a
// comparison of a value of another type is false.
func (r *rule) eval(input any) (bool, error) {
	switch r.op {
	case "And":
		for _, n := range r.nested {
			if ok, err := n.eval(input); err != nil || !ok {
				return false, err
			}
		}
		return true, nil
	case "Or":
		for _, n := range r.nested {
			if ok, err := n.eval(input); err != nil || ok {
				return ok, err
			}
		}
		return false, nil
	case "Not":
		ok, err := r.nested[0].eval(input)
		return !ok && err == nil, err
	case "IsPresent":
		_, present := r.variable.lookup(input)
		return present == r.operand.(bool), nil
	}
	v, err := r.variable.get(input)
	if err != nil {
		return false, err
	}
	switch r.op {
	case "BooleanEquals":
		b, ok := v.(bool)
		return ok && b == r.operand.(bool), nil
	case "StringEquals":
		s, ok := v.(string)
		return ok && s == r.operand.(string), nil
	case "NumericEquals":
		n, ok := v.(json.Number)
		if !ok {
			return false, nil
		}
		a, aok := new(big.Float).SetString(n.String())
		b, bok := new(big.Float).SetString(r.operand.(json.Number).String())
		return aok && bok && a.Cmp(b) == 0, nil
	}
	panic("unreachable: operator " + r.op)
}
