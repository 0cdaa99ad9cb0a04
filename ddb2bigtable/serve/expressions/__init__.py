"""DynamoDB expressions: parsed through moto, checked and evaluated as DynamoDB does.

- `parsing.condition` / `parsing.update`: condition, filter, update and key condition
  expressions through moto's parser, with DynamoDB's checks.
- `conditions.holds`: a condition tree evaluated with DynamoDB's types and comparisons.
- `validation`, `validation_keys`, `validation_updates`: what DynamoDB refuses and moto's
  grammar takes (`validation.checked_placeholders`: ExpressionAttributeNames and Values);
  `parsed_keys.key_condition`: a KeyConditionExpression parsed once per shape.
- `list_updates.passes`: list-element updates in DynamoDB's order;
  `nested_functions.folded`: `if_not_exists` inside another function.
- `legacy.translated`: the legacy parameters (AttributesToGet, Expected, ...) in expression form.
- `projections.projection` / `projections.project`: a ProjectionExpression's document paths,
  and the parts of an item they name.
"""
