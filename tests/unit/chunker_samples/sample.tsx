import React, { useState } from "react";

type Props = { initial: number };

export const Counter = ({ initial }: Props) => {
  const [count, setCount] = useState(initial);
  return <button onClick={() => setCount(count + 1)}>{count}</button>;
};

export function Label({ text }: { text: string }) {
  return <span className="label">{text}</span>;
}
